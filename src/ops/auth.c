/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c — see auth.h. */
#include "ops/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/settings.h"
#include "store/store.h"
#include "util/jwt.h"
#include "util/log.h"

/* The HS* secret from jwt_secret_file, read once per process: a worker is restarted to
 * change it (the JWKS file, which rotates, is re-read instead). */
static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *file_secret; /* owned by this file for the process's life */
static size_t file_secret_len;
static int file_secret_read;

static void read_secret_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[4096];
	size_t n = f != NULL ? fread(buf, 1, sizeof buf, f) : 0;
	if (f != NULL)
		fclose(f);
	/* One trailing newline is what an editor adds, not part of the secret. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (f == NULL || n == 0)
		th_log(TH_LOG_ERROR, "jwt_secret_file %s: cannot be read or is empty", path);
	else if ((file_secret = malloc(n)) != NULL) {
		memcpy(file_secret, buf, n);
		file_secret_len = n;
	}
	OPENSSL_cleanse(buf, sizeof buf);
}

static void secret_of(const struct th_config *cfg, const unsigned char **s, size_t *n)
{
	*s = NULL;
	*n = 0;
	/* The file wins when both are set, as conf/tiny-harness.conf says. */
	if (cfg->jwt_secret_file == NULL && cfg->jwt_secret_env != NULL) {
		const char *v = getenv(cfg->jwt_secret_env);
		if (v != NULL && v[0] != '\0') {
			*s = (const unsigned char *)v;
			*n = strlen(v);
		}
		return;
	}
	if (cfg->jwt_secret_file == NULL)
		return;
	pthread_mutex_lock(&secret_lock);
	if (!file_secret_read) {
		read_secret_file(cfg->jwt_secret_file);
		file_secret_read = 1;
	}
	pthread_mutex_unlock(&secret_lock);
	*s = file_secret;
	*n = file_secret_len;
}

int th_auth_key_hash(const char *key, char hash[TH_KEY_HASH_BUF])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	const EVP_MD *sha = EVP_sha256();
	if (sha == NULL || EVP_Digest(key, strlen(key), md, &len, sha, NULL) != 1 || len != 32)
		return -1;
	for (unsigned i = 0; i < len; i++)
		snprintf(hash + 2 * i, 3, "%02x", md[i]);
	return 0;
}

th_err th_auth_key_new(char key[TH_KEY_BUF], char hash[TH_KEY_HASH_BUF], struct th_error *e)
{
	unsigned char raw[32];
	if (RAND_bytes(raw, sizeof raw) != 1)
		return th_error_set(e, TH_EINTERNAL, "libcrypto cannot give random bytes");
	memcpy(key, TH_KEY_PREFIX, 3);
	long n = th_b64url_encode(raw, sizeof raw, key + 3, TH_KEY_BUF - 3);
	OPENSSL_cleanse(raw, sizeof raw);
	if (n < 0 || th_auth_key_hash(key, hash) != 0)
		return th_error_set(e, TH_EINTERNAL, "libcrypto cannot hash the key");
	return TH_OK;
}

static th_err api_key(struct th_store *st, const char *token, char *who, size_t n,
                      struct th_error *e)
{
	char hash[TH_KEY_HASH_BUF];
	/* Only keys of our own shape are looked up: anything else cannot match. */
	if (strncmp(token, TH_KEY_PREFIX, 3) != 0 || strlen(token) != TH_KEY_LEN)
		return th_error_set(
		    e, TH_EUNAUTHENTICATED,
		    "bearer token refused: it is neither a JWT (three parts separated "
		    "by dots) nor an API key of this server (th_ and 43 characters)");
	if (th_auth_key_hash(token, hash) != 0)
		return th_error_set(e, TH_EINTERNAL, "libcrypto is not available");
	char *p = NULL;
	int began = 0;
	th_err rc = th_store_read_begin(st, &began, e);
	if (rc == TH_OK)
		rc = th_store_key_find(st, hash, &p, e);
	th_store_read_end(st, began);
	if (rc == TH_ENOTFOUND)
		return th_error_set(e, TH_EUNAUTHENTICATED,
		                    "bearer token refused: no such API key (unknown or revoked)");
	if (rc == TH_OK && (p == NULL || strlen(p) + 1 > n))
		rc = th_error_set(e, TH_EINTERNAL, "an API key's participant does not fit");
	if (rc == TH_OK)
		memcpy(who, p, strlen(p) + 1);
	free(p);
	return rc;
}

th_err th_auth_bearer(struct th_store *st, const struct th_config *cfg, const char *token,
                      char *who, size_t n, struct th_error *e)
{
	if (!th_jwt_is_jwt(token))
		return api_key(st, token, who, n, e);
	struct th_jwt_rules r = {
	    .jwks_path = cfg->jwt_jwks_file,
	    .issuer = cfg->jwt_issuer,
	    .audience = cfg->jwt_audience,
	    .claim = cfg->jwt_claim != NULL ? cfg->jwt_claim : "sub",
	    .leeway_s = cfg->jwt_leeway_s,
	    .now_s = (int64_t)time(NULL),
	    .max_id = cfg->lim.max_id,
	};
	secret_of(cfg, &r.secret, &r.secret_len);
	return th_jwt_verify(&r, token, who, n, e);
}
