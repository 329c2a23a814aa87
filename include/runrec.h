/* runrec.h - what every stored run has in common (apply generations, bench runs, tunes in
 * the state database): when, on which generation, on which hardware. */
#ifndef NASTUNE_RUNREC_H
#define NASTUNE_RUNREC_H

struct hwinfo;
struct state;

/* This host's hardware fingerprint: hwinfo plus each NIC's max MTU from netlink. Returns as
 * hwinfo_read; free with hwinfo_clear. */
int runrec_read_hw(struct hwinfo *hw);

struct runrec {
	char created[32]; /* UTC, ISO 8601 */
	long generation;  /* in force; -1 when none (or no state database) */
	char hw_hash[65]; /* hwinfo_hash of the hardware fingerprint */
	char *hw;	  /* hwinfo_text; "" when unread */
};

/* Fills r for now: the time, the generation in force in st (NULL: -1) and this host's
 * hardware fingerprint (runrec_read_hw). Returns 0, or -EIO when the hardware could not be
 * read (r is still usable: the hash of what was read). Release with runrec_clear. */
int runrec_read(struct runrec *r, struct state *st);
/* Frees what r holds. */
void runrec_clear(struct runrec *r);

#endif
