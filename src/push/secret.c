/* SPDX-License-Identifier: Apache-2.0 */
/* secret.c — push tokens and credentials at rest (PUSH-4): AES-256-GCM (OpenSSL
 * libcrypto) with a 32-byte key from the environment variable TINY_HARNESS_PUSH_KEY.
 *
 * A sealed value is "th1" | nonce (12 random bytes) | ciphertext | tag (16 bytes). The
 * associated data binds it to its place — "tiny-harness push secret v1", the field,
 * the task and the config id — so a value copied into another row or column of the
 * database does not decrypt. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "push/push.h"
#include "push/push_int.h"
#include "util/buf.h"
#include "util/text.h"

#define MAGIC "th1"
#define MAGIC_LEN 3
#define NONCE_LEN 12
#define TAG_LEN 16
/* Secrets are header values; far below this. */
#define PLAIN_MAX 65536

void th_push_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		OPENSSL_cleanse(p, n);
}

void th_push_secret_free(char *s)
{
	if (s == NULL)
		return;
	th_push_wipe(s, strlen(s));
	free(s);
}

th_err th_push_key(unsigned char key[TH_PUSH_KEY_LEN], struct th_error *e)
{
	const char *v = getenv(TH_PUSH_KEY_ENV);
	if (v == NULL || *v == '\0')
		return th_error_set(
		    e, TH_EUNSUPPORTED,
		    "this server cannot store push notification tokens or "
		    "credentials: its operator has not set " TH_PUSH_KEY_ENV
		    " (the key that encrypts them); send the config without token "
		    "and authentication.credentials, or ask the operator to set it");
	size_t n = strlen(v);
	int ok = n == 2 * TH_PUSH_KEY_LEN;
	for (size_t i = 0; ok && i < TH_PUSH_KEY_LEN; i++) {
		int hi = th_hexval((unsigned char)v[2 * i]),
		    lo = th_hexval((unsigned char)v[2 * i + 1]);
		if (hi < 0 || lo < 0)
			ok = 0;
		else
			key[i] = (unsigned char)(hi << 4 | lo);
	}
	if (!ok) {
		th_push_wipe(key, TH_PUSH_KEY_LEN);
		return th_error_set(e, TH_EINTERNAL,
		                    "server misconfiguration: " TH_PUSH_KEY_ENV
		                    " must be 64 hexadecimal digits (32 bytes, e.g. from `openssl "
		                    "rand -hex 32`)");
	}
	return TH_OK;
}

/* "tiny-harness push secret v1\0field\0task\0config" */
static int make_aad(struct th_buf *b, const char *field, const char *task_id, const char *config_id)
{
	th_buf_init(b);
	static const char tag[] = "tiny-harness push secret v1";
	th_buf_append(b, tag, sizeof tag); /* with its NUL */
	th_buf_append(b, field, strlen(field) + 1);
	th_buf_append(b, task_id, strlen(task_id) + 1);
	th_buf_append(b, config_id, strlen(config_id));
	return b->oom ? -1 : 0;
}

th_err th_push_seal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                    const char *task_id, const char *config_id, const char *plain,
                    unsigned char **blob, size_t *len, struct th_error *e)
{
	*blob = NULL;
	*len = 0;
	if (field == NULL || task_id == NULL || config_id == NULL || plain == NULL)
		return th_error_set(e, TH_EINTERNAL, "push secret: missing argument");
	size_t pn = strlen(plain);
	if (pn > PLAIN_MAX)
		return th_error_set(e, TH_EINVAL, "%s is longer than %d bytes", field, PLAIN_MAX);
	struct th_buf aad;
	if (make_aad(&aad, field, task_id, config_id) != 0) {
		th_buf_free(&aad);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	size_t total = MAGIC_LEN + NONCE_LEN + pn + TAG_LEN;
	unsigned char *out = malloc(total);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	th_err rc = TH_OK;
	if (out == NULL || ctx == NULL) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
		goto done;
	}
	memcpy(out, MAGIC, MAGIC_LEN);
	unsigned char *nonce = out + MAGIC_LEN, *ct = nonce + NONCE_LEN, *tag = ct + pn;
	int outl = 0, ok = RAND_bytes(nonce, NONCE_LEN) == 1 &&
	                   EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
	                   EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
	                   EVP_EncryptInit_ex(ctx, NULL, NULL, key, nonce) == 1 &&
	                   EVP_EncryptUpdate(ctx, NULL, &outl, (const unsigned char *)aad.data,
	                                     (int)aad.len) == 1;
	if (ok && pn > 0)
		ok =
		    EVP_EncryptUpdate(ctx, ct, &outl, (const unsigned char *)plain, (int)pn) == 1 &&
		    (size_t)outl == pn;
	if (ok)
		ok = EVP_EncryptFinal_ex(ctx, ct + pn, &outl) == 1 && outl == 0 &&
		     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) == 1;
	if (!ok) {
		rc = th_error_set(e, TH_EINTERNAL, "cannot encrypt the push %s (libcrypto failed)",
		                  field);
		goto done;
	}
	*blob = out;
	*len = total;
	out = NULL;
done:
	EVP_CIPHER_CTX_free(ctx);
	free(out);
	th_buf_free(&aad);
	return rc;
}

th_err th_push_unseal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                      const char *task_id, const char *config_id, const unsigned char *blob,
                      size_t len, char **plain, struct th_error *e)
{
	*plain = NULL;
	if (field == NULL || task_id == NULL || config_id == NULL || blob == NULL ||
	    len < MAGIC_LEN + NONCE_LEN + TAG_LEN ||
	    len > MAGIC_LEN + NONCE_LEN + TAG_LEN + PLAIN_MAX ||
	    memcmp(blob, MAGIC, MAGIC_LEN) != 0)
		return th_error_set(
		    e, TH_EINTERNAL,
		    "cannot decrypt the push %s: it is not a value this server sealed",
		    field ? field : "secret");
	size_t cn = len - MAGIC_LEN - NONCE_LEN - TAG_LEN;
	const unsigned char *nonce = blob + MAGIC_LEN, *ct = nonce + NONCE_LEN, *tag = ct + cn;
	struct th_buf aad;
	if (make_aad(&aad, field, task_id, config_id) != 0) {
		th_buf_free(&aad);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	char *out = malloc(cn + 1);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	th_err rc = TH_OK;
	if (out == NULL || ctx == NULL) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
		goto done;
	}
	unsigned char tagbuf[TAG_LEN];
	memcpy(tagbuf, tag, TAG_LEN);
	int outl = 0, ok = EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) == 1 &&
	                   EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) == 1 &&
	                   EVP_DecryptInit_ex(ctx, NULL, NULL, key, nonce) == 1 &&
	                   EVP_DecryptUpdate(ctx, NULL, &outl, (const unsigned char *)aad.data,
	                                     (int)aad.len) == 1;
	if (ok && cn > 0)
		ok = EVP_DecryptUpdate(ctx, (unsigned char *)out, &outl, ct, (int)cn) == 1 &&
		     (size_t)outl == cn;
	if (ok)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tagbuf) == 1 &&
		     EVP_DecryptFinal_ex(ctx, (unsigned char *)out + cn, &outl) == 1;
	if (ok) {
		out[cn] = '\0';
		ok = strlen(out) == cn;
	}
	if (!ok) {
		th_push_wipe(out, cn + 1);
		rc = th_error_set(
		    e, TH_EINTERNAL,
		    "cannot decrypt the push %s of config %.100s: the value was changed "
		    "or " TH_PUSH_KEY_ENV " is not the key it was sealed with",
		    field, config_id);
		goto done;
	}
	*plain = out;
	out = NULL;
done:
	EVP_CIPHER_CTX_free(ctx);
	free(out);
	th_buf_free(&aad);
	return rc;
}
