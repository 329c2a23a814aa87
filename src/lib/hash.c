/* hash.c - SHA-256 through libcrypto's own SHA-256 functions. Not EVP: fetching a digest
 * through EVP loads OpenSSL 3's provider tables first, about a millisecond of every process
 * that hashes once, which is a tenth of the postinst no-op (`apply --if-changed`). */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init & co.: deprecated, kept by OpenSSL 3 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>

#include "hash.h"
#include "log.h"
#include "xmalloc.h"

struct hash_ctx {
	SHA256_CTX c;
};

struct hash_ctx *
hash_new(void)
{
	struct hash_ctx *h = xmalloc(sizeof(*h));

	if (SHA256_Init(&h->c) != 1)
		fatalx("cannot initialise SHA-256");
	return h;
}

void
hash_update(struct hash_ctx *h, const void *data, size_t len)
{
	if (SHA256_Update(&h->c, data, len) != 1)
		fatalx("SHA-256 update failed");
}

void
hash_final_hex(struct hash_ctx *h, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];

	if (SHA256_Final(md, &h->c) != 1)
		fatalx("SHA-256 final failed");
	for (size_t i = 0; i < sizeof(md); i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[64] = '\0';
	free(h);
}

void
hash_sha256_hex(const void *data, size_t len, char out[65])
{
	struct hash_ctx *h = hash_new();

	hash_update(h, data, len);
	hash_final_hex(h, out);
}

void
hash_hmac_sha256_hex(const void *key, size_t klen, const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (!HMAC(EVP_sha256(), key, (int)klen, data, len, md, &n) || n != 32)
		fatalx("HMAC-SHA256 failed");
	for (i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}
