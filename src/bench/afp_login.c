/* afp_login.c - the AFP driver's logins: the server's status block read for its versions and
 * methods, then "No User Authent" (guest), "Cleartxt Passwrd", or DHX2 (what Macs use: DH key
 * agreement and CAST5-CBC, from OpenSSL's legacy provider in a private library context). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "afp.h"
#include "xmalloc.h"

bool
afp_status_list(const uint8_t *d, uint32_t len, uint16_t off, char *out, size_t outlen)
{
	uint32_t p = off;
	unsigned i, n;

	out[0] = '\0';
	if (off == 0 || off >= len)
		return false;
	n = d[p++];
	for (i = 0; i < n; i++) {
		if (p >= len || p + 1 + d[p] > len)
			return false;
		snprintf(out + strlen(out), outlen - strlen(out), "%s%.*s", i ? "," : "", d[p],
			 (const char *)d + p + 1);
		p += 1 + d[p];
	}
	return true;
}

bool
afp_has_item(const char *list, const char *item)
{
	size_t n = strlen(item);
	const char *p = list;

	while ((p = strstr(p, item))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static void
inc128(uint8_t *n)
{
	int i;

	for (i = 15; i >= 0; i--)
		if (++n[i])
			break;
}

/* CAST5-CBC without padding, as DHX2 uses it; in a private OpenSSL library context so the
 * legacy provider is not loaded for the rest of the process. */
static int
cast5_cbc(const uint8_t key[16], const char *iv, const uint8_t *in, int len, uint8_t *out, int enc)
{
	OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();
	OSSL_PROVIDER *legacy = NULL, *dflt = NULL;
	EVP_CIPHER *ciph = NULL;
	EVP_CIPHER_CTX *cx = NULL;
	int n = 0, m = 0, rc = -1;

	if (!lib)
		return -1;
	legacy = OSSL_PROVIDER_load(lib, "legacy");
	dflt = OSSL_PROVIDER_load(lib, "default");
	ciph = EVP_CIPHER_fetch(lib, "CAST5-CBC", NULL);
	cx = EVP_CIPHER_CTX_new();
	if (!legacy || !ciph || !cx)
		goto out;
	if (EVP_CipherInit_ex2(cx, ciph, key, (const uint8_t *)iv, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_padding(cx, 0) != 1 || EVP_CipherUpdate(cx, out, &n, in, len) != 1 ||
	    EVP_CipherFinal_ex(cx, out + n, &m) != 1 || n + m != len)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(cx);
	EVP_CIPHER_free(ciph);
	if (legacy)
		OSSL_PROVIDER_unload(legacy);
	if (dflt)
		OSSL_PROVIDER_unload(dflt);
	OSSL_LIB_CTX_free(lib);
	return rc;
}

/* FPLogin's common start: command, AFP version, UAM, user, padded to even length. */
static void
login_start(struct msg *m, const char *ver, const char *uam, const char *user)
{
	afp_msg_start(m, FP_LOGIN, 0);
	m->n = 1; /* FPLogin has no pad byte */
	afp_msg_pstr(m, ver);
	afp_msg_pstr(m, uam);
	if (user) {
		afp_msg_pstr(m, user);
		if (m->n % 2)
			afp_msg_u8(m, 0);
	}
}

static int
login_failed(struct bench_conn *c, int code)
{
	if (IS_ERRNO(code))
		return code;
	if (code == -5023 || code == -5000)
		return afpc_fail(c, EPERM, "login", NULL,
				 "logon failure for %s (%s) (AFP error %d)", afp_who(c),
				 c->t->user ? "wrong password?" : "guest access not allowed?",
				 code);
	return afpc_fail_code(c, code, "login", NULL);
}

static int
login_dhx2(struct bench_conn *c, const char *ver)
{
	const struct bench_target *t = c->t;
	const char *pw = t->password ? t->password : "";
	BN_CTX *bx = BN_CTX_new();
	BIGNUM *p = BN_new(), *g = BN_new(), *ma = BN_new(), *rb = BN_new(), *mb = BN_new(),
	       *k = BN_new(), *pm2 = BN_new();
	uint8_t *kbuf = NULL, *mbbuf = NULL, key[16], nonce[16], enc[272], plain[272];
	unsigned int keylen = 0;
	struct msg *m = xmalloc(sizeof(*m));
	uint16_t sid, plen;
	int code, rc = -EIO;

	if (!bx || !p || !g || !ma || !rb || !mb || !k || !pm2)
		goto crypto;
	login_start(m, ver, "DHX2", t->user);
	code = afp_msg(c, m, "login", NULL);
	if (code != AFPERR_AUTHCONT) {
		rc = code ? login_failed(c, code)
			  : afpc_fail(c, EPROTO, "login", NULL, "DHX2: unexpected success");
		goto out;
	}
	/* ID(2) g(4) len(2) p(len) Ma(len) */
	if (c->rlen < 8)
		goto proto;
	sid = get16(c->rbuf);
	plen = get16(c->rbuf + 6);
	if (plen < 16 || plen > 512 || c->rlen < 8u + 2u * plen)
		goto proto;
	BN_set_word(g, get32(c->rbuf + 2));
	BN_bin2bn(c->rbuf + 8, plen, p);
	BN_bin2bn(c->rbuf + 8 + plen, plen, ma);
	/* rb in [1, p-2] */
	if (!BN_copy(pm2, p) || !BN_sub_word(pm2, 2) || !BN_rand_range(rb, pm2) ||
	    !BN_add_word(rb, 1) || !BN_mod_exp(mb, g, rb, p, bx) || !BN_mod_exp(k, ma, rb, p, bx))
		goto crypto;
	kbuf = xmalloc(plen);
	mbbuf = xmalloc(plen);
	if (BN_bn2binpad(k, kbuf, plen) < 0 || BN_bn2binpad(mb, mbbuf, plen) < 0 ||
	    EVP_Digest(kbuf, plen, key, &keylen, EVP_md5(), NULL) != 1 ||
	    RAND_bytes(nonce, sizeof(nonce)) != 1)
		goto crypto;
	if (cast5_cbc(key, "LWallace", nonce, 16, enc, 1) < 0)
		goto crypto;
	afp_msg_start(m, FP_LOGINCONT, 0);
	afp_msg_u16(m, sid);
	afp_msg_bytes(m, mbbuf, plen);
	afp_msg_bytes(m, enc, 16);
	code = afp_msg(c, m, "login", NULL);
	if (code != AFPERR_AUTHCONT) {
		rc = code ? login_failed(c, code)
			  : afpc_fail(c, EPROTO, "login", NULL, "DHX2: unexpected success");
		goto out;
	}
	/* ID(2), then CAST(cnonce+1 | snonce) */
	if (c->rlen < 34 || cast5_cbc(key, "CJalbert", c->rbuf + 2, 32, plain, 0) < 0)
		goto proto;
	inc128(nonce);
	if (memcmp(plain, nonce, 16) != 0) {
		rc = afpc_fail(c, EPERM, "login", NULL,
			       "DHX2: the server did not prove the shared key");
		goto out;
	}
	memcpy(plain, plain + 16, 16);
	inc128(plain);
	memset(plain + 16, 0, 256);
	memcpy(plain + 16, pw, strlen(pw) > 255 ? 255 : strlen(pw));
	if (cast5_cbc(key, "LWallace", plain, 272, enc, 1) < 0)
		goto crypto;
	afp_msg_start(m, FP_LOGINCONT, 0);
	afp_msg_u16(m, (uint16_t)(sid + 1));
	afp_msg_bytes(m, enc, 272);
	code = afp_msg(c, m, "login", NULL);
	rc = code ? login_failed(c, code) : 0;
	goto out;
proto:
	rc = afpc_fail(c, EPROTO, "login", NULL, "DHX2: malformed reply from the server");
	goto out;
crypto:
	rc = afpc_fail(c, EIO, "login", NULL,
		       "DHX2: OpenSSL failed (is CAST5 available from the legacy provider?)");
out:
	explicit_bzero(plain, sizeof(plain));
	explicit_bzero(key, sizeof(key));
	explicit_bzero(m, sizeof(*m));
	free(m);
	free(kbuf);
	free(mbbuf);
	BN_free(p);
	BN_free(g);
	BN_free(ma);
	BN_clear_free(rb);
	BN_free(mb);
	BN_clear_free(k);
	BN_free(pm2);
	BN_CTX_free(bx);
	return rc;
}

int
afp_login(struct bench_conn *c, const char *ver, const char *uams)
{
	const struct bench_target *t = c->t;
	struct msg m;
	int code;

	if (!t->user) {
		if (!afp_has_item(uams, "No User Authent"))
			return afpc_fail(c, EACCES, "login", NULL,
					 "the server offers no guest login (UAMs: %s)", uams);
		login_start(&m, ver, "No User Authent", NULL);
		code = afp_msg(c, &m, "login", NULL);
		return code ? login_failed(c, code) : 0;
	}
	if (afp_has_item(uams, "DHX2"))
		return login_dhx2(c, ver);
	if (afp_has_item(uams, "Cleartxt Passwrd")) {
		char pw[8] = { 0 };
		const char *s = t->password ? t->password : "";
		memcpy(pw, s, strlen(s) > 8 ? 8 : strlen(s));
		login_start(&m, ver, "Cleartxt Passwrd", t->user);
		afp_msg_bytes(&m, pw, 8);
		explicit_bzero(pw, sizeof(pw));
		code = afp_msg(c, &m, "login", NULL);
		explicit_bzero(&m, sizeof(m));
		return code ? login_failed(c, code) : 0;
	}
	return afpc_fail(c, EPROTONOSUPPORT, "login", NULL,
			 "no login method for a user that this client speaks (server offers: %s; "
			 "need DHX2 or Cleartxt Passwrd)",
			 uams);
}
