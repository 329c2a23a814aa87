/* hash.c - SHA-256 through libcrypto's EVP interface. */
#include <openssl/evp.h>
#include <stdio.h>

#include "hash.h"
#include "log.h"

struct hash_ctx {
	EVP_MD_CTX *md;
};

struct hash_ctx *
hash_new(void)
{
	struct hash_ctx *h = OPENSSL_malloc(sizeof(*h));

	if (!h || !(h->md = EVP_MD_CTX_new()) || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1)
		fatalx("cannot initialise SHA-256");
	return h;
}

void
hash_update(struct hash_ctx *h, const void *data, size_t len)
{
	if (EVP_DigestUpdate(h->md, data, len) != 1)
		fatalx("SHA-256 update failed");
}

void
hash_final_hex(struct hash_ctx *h, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (EVP_DigestFinal_ex(h->md, md, &n) != 1)
		fatalx("SHA-256 final failed");
	for (i = 0; i < n && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
	EVP_MD_CTX_free(h->md);
	OPENSSL_free(h);
}

void
hash_sha256_hex(const void *data, size_t len, char out[65])
{
	struct hash_ctx *h = hash_new();

	hash_update(h, data, len);
	hash_final_hex(h, out);
}
