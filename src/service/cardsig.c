/* SPDX-License-Identifier: Apache-2.0 */
/* cardsig.c — the agent card as served, signed when configured (see cardsig.h). */
#include "service/cardsig.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jcs.h"
#include "util/jsonx.h"
#include "util/jws.h"
#include "util/jwt.h"
#include "util/log.h"

/* What one process keeps: the key (read once) and the signature of the last card it
 * signed (made once). Every field is owned here and replaced under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *path;                 /* the file key came from; free */
	struct th_jws_key *key;     /* th_jws_key_free */
	char thumbprint[48];        /* the key's RFC 7638 thumbprint, the default kid */
	char *payload;              /* the canonical card last signed; free */
	char *protected_b64;        /* its protected header, base64url; free */
	char *signature;            /* its signature, base64url; free */
	char logged[TH_ERRMSG_MAX]; /* the last cause written to the log */
} st;

/* FNV-1a 64 over n bytes of s, continuing from h: cheap, the same in every process and
 * build, enough to tell two cards apart for caching. */
static unsigned long long fnv1a(unsigned long long h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_BASIS 0xcbf29ce484222325ULL

static void forget_signature(void)
{
	free(st.payload);
	free(st.protected_b64);
	free(st.signature);
	st.payload = st.protected_b64 = st.signature = NULL;
}

/* The key of path, read on the first call and whenever path changes; under mu. */
static th_err key_of(const char *path, struct th_error *e)
{
	if (st.key != NULL && strcmp(st.path, path) == 0)
		return TH_OK;
	th_jws_key_free(st.key);
	free(st.path);
	st.key = NULL;
	st.path = NULL;
	forget_signature();
	struct th_jws_key *k = NULL;
	th_err rc = th_jws_key_load(path, &k, e);
	if (rc == TH_OK)
		rc = th_jws_key_thumbprint(k, st.thumbprint, sizeof st.thumbprint, e);
	if (rc == TH_OK && (st.path = strdup(path)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc != TH_OK) {
		th_jws_key_free(k);
		return rc;
	}
	st.key = k;
	return TH_OK;
}

/* {"alg","typ":"JOSE","kid"[,"jku"]} (A2A 1.0 §8.4.2), canonical, base64url; free. */
static char *protected_header(const struct th_config *cfg, struct th_error *e)
{
	json_object *h = json_object_new_object();
	int rc = th_json_put(h, "alg", json_object_new_string(th_jws_key_alg(st.key)));
	rc |= th_json_put(h, "typ", json_object_new_string("JOSE"));
	rc |=
	    th_json_put(h, "kid",
	                json_object_new_string(cfg->card_signing_kid != NULL ? cfg->card_signing_kid
	                                                                     : st.thumbprint));
	if (cfg->card_signing_jku != NULL)
		rc |= th_json_put(h, "jku", json_object_new_string(cfg->card_signing_jku));
	char *json = rc == 0 ? th_jcs_text(h, e) : NULL; /* free (below) */
	json_object_put(h);
	if (json == NULL) {
		th_error_set(e, TH_ENOMEM, "out of memory");
		return NULL;
	}
	size_t cap = strlen(json) * 4 / 3 + 4;
	char *b64 = malloc(cap); /* the caller frees it */
	if (b64 != NULL)
		th_b64url_encode((const unsigned char *)json, strlen(json), b64, cap);
	else
		th_error_set(e, TH_ENOMEM, "out of memory");
	free(json);
	return b64;
}

/* Signs payload with the key under cfg's kid and jku, unless this process already did;
 * under mu. */
static th_err sign_payload(const char *payload, const struct th_config *cfg, struct th_error *e)
{
	char *prot = protected_header(cfg, e); /* free, or kept in st */
	if (prot == NULL)
		return e->code;
	if (st.payload != NULL && strcmp(st.payload, payload) == 0 &&
	    strcmp(st.protected_b64, prot) == 0) {
		free(prot);
		return TH_OK;
	}
	forget_signature();
	size_t plen = strlen(payload), pcap = plen * 4 / 3 + 4;
	size_t icap = strlen(prot) + 1 + pcap;
	char *input = malloc(icap); /* free (below) */
	char *copy = strdup(payload);
	th_err rc =
	    input != NULL && copy != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
	char *sig = NULL;
	if (rc == TH_OK) {
		size_t n = (size_t)snprintf(input, icap, "%s.", prot);
		th_b64url_encode((const unsigned char *)payload, plen, input + n, icap - n);
		rc = th_jws_sign(st.key, input, strlen(input), &sig, e);
	}
	free(input);
	if (rc != TH_OK) {
		free(copy);
		free(prot);
		return rc;
	}
	st.payload = copy;
	st.protected_b64 = prot;
	st.signature = sig;
	return TH_OK;
}

/* [{"protected","signature"}] on card (its payload computed without them). */
static th_err attach(json_object *card, struct th_error *e)
{
	json_object *sig = json_object_new_object(), *arr = json_object_new_array_ext(1);
	int rc = th_json_put(sig, "protected", json_object_new_string(st.protected_b64));
	rc |= th_json_put(sig, "signature", json_object_new_string(st.signature));
	if (rc != 0 || arr == NULL || json_object_array_add(arr, sig) != 0) {
		json_object_put(sig);
		json_object_put(arr);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return th_json_put(card, "signatures", arr) == 0
	           ? TH_OK
	           : th_error_set(e, TH_ENOMEM, "out of memory");
}

/* Signs card in place; *tag gets the weak validator's hash. Under mu. */
static th_err sign_card(json_object *card, const struct th_config *cfg, unsigned long long *tag,
                        struct th_error *e)
{
	json_object_object_del(card, "signatures");
	th_err rc = key_of(cfg->card_signing_key, e);
	char *payload = rc == TH_OK ? th_jcs_text(card, e) : NULL; /* free (below) */
	if (rc == TH_OK && payload == NULL)
		rc = e->code;
	if (rc == TH_OK)
		rc = sign_payload(payload, cfg, e);
	free(payload);
	if (rc == TH_OK)
		rc = attach(card, e);
	if (rc == TH_OK) {
		*tag = fnv1a(FNV_BASIS, st.payload, strlen(st.payload));
		*tag = fnv1a(*tag, ".", 1);
		*tag = fnv1a(*tag, st.protected_b64, strlen(st.protected_b64));
	}
	return rc;
}

/* The cause goes to the log once per process (every request would repeat it), and to
 * the client only as a pointer to the log (LIM-5: no paths in responses). */
static th_err signing_failed(struct th_error *e, char *cause, size_t cause_len)
{
	if (strcmp(st.logged, e->msg) != 0) {
		th_log(TH_LOG_ERROR, "the agent card is not served: %s", e->msg);
		snprintf(st.logged, sizeof st.logged, "%s", e->msg);
	}
	if (cause != NULL && cause_len > 0)
		snprintf(cause, cause_len, "%s", e->msg);
	return th_error_set(e, TH_EINTERNAL,
	                    "the agent card is not available: its signing key cannot be used "
	                    "(the server's error log says why)");
}

th_err th_card_serve(json_object *card, const struct th_config *cfg, char **text,
                     char etag[TH_CARD_ETAG_MAX], char *cause, size_t cause_len, struct th_error *e)
{
	*text = NULL;
	unsigned long long tag = 0;
	int signing = cfg->card_signing_key != NULL && cfg->card_signing_key[0] != '\0';
	if (signing) {
		pthread_mutex_lock(&mu);
		th_err rc = sign_card(card, cfg, &tag, e);
		if (rc != TH_OK && rc != TH_ENOMEM)
			rc = signing_failed(e, cause, cause_len);
		pthread_mutex_unlock(&mu);
		if (rc != TH_OK)
			return rc;
	}
	const char *s = th_json_text(card);
	*text = s != NULL ? strdup(s) : NULL; /* the caller frees it */
	if (*text == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	if (signing)
		snprintf(etag, TH_CARD_ETAG_MAX, "W/\"%016llx\"", tag);
	else
		snprintf(etag, TH_CARD_ETAG_MAX, "\"%016llx\"", fnv1a(FNV_BASIS, s, strlen(s)));
	return TH_OK;
}

char *th_card_jwks(const struct th_config *cfg, struct th_error *e)
{
	if (cfg->card_signing_key == NULL || cfg->card_signing_key[0] == '\0') {
		th_error_set(e, TH_EINVAL, "card_signing_key is not set: the card is not signed");
		return NULL;
	}
	pthread_mutex_lock(&mu);
	char *jwk =
	    key_of(cfg->card_signing_key, e) == TH_OK
	        ? th_jws_key_public_jwk(
	              st.key, cfg->card_signing_kid != NULL ? cfg->card_signing_kid : st.thumbprint,
	              e)
	        : NULL; /* free (below) */
	pthread_mutex_unlock(&mu);
	if (jwk == NULL)
		return NULL;
	size_t cap = strlen(jwk) + 16;
	char *out = malloc(cap); /* the caller frees it */
	if (out != NULL)
		snprintf(out, cap, "{\"keys\":[%s]}", jwk);
	else
		th_error_set(e, TH_ENOMEM, "out of memory");
	free(jwk);
	return out;
}
