/* hash.h - SHA-256 as hex, through OpenSSL's libcrypto. */
#ifndef NASTUNE_HASH_H
#define NASTUNE_HASH_H

#include <stddef.h>

struct hash_ctx;

/* One-shot: 64 hex characters and a NUL into out. */
void hash_sha256_hex(const void *data, size_t len, char out[65]);
/* Incremental: new, update (any number of times), final (frees the ctx). */
struct hash_ctx *hash_new(void);
void hash_update(struct hash_ctx *h, const void *data, size_t len);
void hash_final_hex(struct hash_ctx *h, char out[65]);

/* HMAC-SHA256 of data under key: 64 hex characters and a NUL into out. */
void hash_hmac_sha256_hex(const void *key, size_t klen, const void *data, size_t len, char out[65]);

#endif
