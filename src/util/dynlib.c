/* SPDX-License-Identifier: Apache-2.0 */
/* dynlib.c — libcurl, libcrypto and libpq, loaded on first use (issue 13, decision-022;
 * libpq since issue 15, decision-031: only a store on PostgreSQL needs it).
 *
 * A plain-CGI process serves one request and exits, so its start-up is most of what a
 * request costs; linking libcurl and libcrypto made every process load 30 more shared
 * libraries (37 in all) although only push delivery, the openai model, push secrets and
 * `tiny-harness complete` use them. The program is not linked with them: it defines the
 * functions it calls, each of which opens the library (dlopen, once per process) and
 * forwards to the library's own function. The rest of the code calls libcurl and
 * libcrypto as usual, through their headers.
 *
 * When a library cannot be opened, the functions fail as their libraries document for
 * lack of memory or initialisation (NULL, 0, CURLE_FAILED_INIT, …) and one line names the
 * library in the log (th_log). */
#define CURL_DISABLE_TYPECHECK 1 /* curl.h's macro would rename curl_easy_setopt below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <libpq-fe.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

#ifndef TH_CURL_SONAME
#define TH_CURL_SONAME "libcurl.so.4"
#endif
#ifndef TH_CRYPTO_SONAME
#define TH_CRYPTO_SONAME "libcrypto.so.3"
#endif
#ifndef TH_PQ_SONAME
#define TH_PQ_SONAME "libpq.so.5"
#endif

static void *curl_lib, *crypto_lib, *pq_lib;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT, crypto_once = PTHREAD_ONCE_INIT,
                      pq_once = PTHREAD_ONCE_INIT;

static void *open_lib(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		th_log(TH_LOG_ERROR, "cannot load %s: %s", soname, dlerror());
	return h;
}

static void open_curl(void)
{
	curl_lib = open_lib(TH_CURL_SONAME);
}

static void open_crypto(void)
{
	crypto_lib = open_lib(TH_CRYPTO_SONAME);
}

/* The library's own function name, or NULL. */
static void *curl_fn(const char *name)
{
	pthread_once(&curl_once, open_curl);
	return curl_lib != NULL ? dlsym(curl_lib, name) : NULL;
}

static void open_pq(void)
{
	pq_lib = open_lib(TH_PQ_SONAME);
}

static void *pq_fn(const char *name)
{
	pthread_once(&pq_once, open_pq);
	return pq_lib != NULL ? dlsym(pq_lib, name) : NULL;
}

static void *crypto_fn(const char *name)
{
	pthread_once(&crypto_once, open_crypto);
	return crypto_lib != NULL ? dlsym(crypto_lib, name) : NULL;
}

/* One forwarding function: looks the symbol up once, then calls it; fail when missing.
 * dlsym returns an object pointer; POSIX guarantees it converts to a function pointer. */
#define FORWARD(lib, ret, name, params, args, fail)                                                \
	ret name params                                                                            \
	{                                                                                          \
		static ret(*fn) params;                                                            \
		if (fn == NULL)                                                                    \
			*(void **)&fn = lib##_fn(#name);                                           \
		if (fn == NULL)                                                                    \
			return fail;                                                               \
		return fn args;                                                                    \
	}
#define FORWARD_VOID(lib, name, params, args)                                                      \
	void name params                                                                           \
	{                                                                                          \
		static void(*fn) params;                                                           \
		if (fn == NULL)                                                                    \
			*(void **)&fn = lib##_fn(#name);                                           \
		if (fn != NULL)                                                                    \
			fn args;                                                                   \
	}

/* ---- libcurl ---------------------------------------------------------------- */

FORWARD(curl, CURL *, curl_easy_init, (void), (), NULL)
FORWARD_VOID(curl, curl_easy_cleanup, (CURL * h), (h))
FORWARD(curl, CURLcode, curl_easy_perform, (CURL * h), (h), CURLE_FAILED_INIT)
FORWARD(curl, const char *, curl_easy_strerror, (CURLcode c), (c), "libcurl is not available")
FORWARD_VOID(curl, curl_free, (void *p), (p))
FORWARD(curl, CURLM *, curl_multi_init, (void), (), NULL)
FORWARD(curl, CURLMcode, curl_multi_cleanup, (CURLM * m), (m), CURLM_INTERNAL_ERROR)
FORWARD(curl, CURLMcode, curl_multi_add_handle, (CURLM * m, CURL *h), (m, h), CURLM_INTERNAL_ERROR)
FORWARD(curl, CURLMcode, curl_multi_remove_handle, (CURLM * m, CURL *h), (m, h),
        CURLM_INTERNAL_ERROR)
FORWARD(curl, CURLMcode, curl_multi_perform, (CURLM * m, int *running), (m, running),
        CURLM_INTERNAL_ERROR)
FORWARD(curl, CURLMcode, curl_multi_poll,
        (CURLM * m, struct curl_waitfd *extra, unsigned n, int ms, int *numfds),
        (m, extra, n, ms, numfds), CURLM_INTERNAL_ERROR)
FORWARD(curl, CURLMsg *, curl_multi_info_read, (CURLM * m, int *left), (m, left), NULL)
FORWARD(curl, struct curl_slist *, curl_slist_append, (struct curl_slist * l, const char *s),
        (l, s), NULL)
FORWARD_VOID(curl, curl_slist_free_all, (struct curl_slist * l), (l))
FORWARD(curl, CURLU *, curl_url, (void), (), NULL)
FORWARD_VOID(curl, curl_url_cleanup, (CURLU * u), (u))
FORWARD(curl, CURLUcode, curl_url_get, (CURLU * u, CURLUPart what, char **part, unsigned f),
        (u, what, part, f), CURLUE_OUT_OF_MEMORY)
FORWARD(curl, CURLUcode, curl_url_set, (CURLU * u, CURLUPart what, const char *part, unsigned f),
        (u, what, part, f), CURLUE_OUT_OF_MEMORY)
FORWARD(curl, const char *, curl_url_strerror, (CURLUcode c), (c), "libcurl is not available")

/* The variadic two: the argument's type follows from the option's number (curl.h:
 * CURLOPTTYPE_* and CURLINFO_* ranges). */
CURLcode curl_easy_setopt(CURL *h, CURLoption opt, ...)
{
	static CURLcode (*fn)(CURL *, CURLoption, ...);
	if (fn == NULL)
		*(void **)&fn = curl_fn("curl_easy_setopt");
	if (fn == NULL)
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, opt);
	CURLcode rc;
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = fn(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = fn(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = fn(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = fn(h, opt, va_arg(ap, curl_off_t));
	else
		rc = fn(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_getinfo(CURL *h, CURLINFO info, ...)
{
	static CURLcode (*fn)(CURL *, CURLINFO, ...);
	if (fn == NULL)
		*(void **)&fn = curl_fn("curl_easy_getinfo");
	if (fn == NULL)
		return CURLE_FAILED_INIT;
	va_list ap;
	va_start(ap, info);
	CURLcode rc = fn(h, info, va_arg(ap, void *)); /* every CURLINFO_* takes a pointer */
	va_end(ap);
	return rc;
}

/* ---- libcrypto -------------------------------------------------------------- */

FORWARD(crypto, EVP_CIPHER_CTX *, EVP_CIPHER_CTX_new, (void), (), NULL)
FORWARD_VOID(crypto, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX * c), (c))
FORWARD(crypto, int, EVP_CIPHER_CTX_ctrl, (EVP_CIPHER_CTX * c, int type, int arg, void *ptr),
        (c, type, arg, ptr), 0)
FORWARD(crypto, const EVP_CIPHER *, EVP_aes_256_gcm, (void), (), NULL)
FORWARD(crypto, int, EVP_EncryptInit_ex,
        (EVP_CIPHER_CTX * c, const EVP_CIPHER *t, ENGINE *e, const unsigned char *k,
         const unsigned char *iv),
        (c, t, e, k, iv), 0)
FORWARD(crypto, int, EVP_EncryptUpdate,
        (EVP_CIPHER_CTX * c, unsigned char *out, int *outl, const unsigned char *in, int inl),
        (c, out, outl, in, inl), 0)
FORWARD(crypto, int, EVP_EncryptFinal_ex, (EVP_CIPHER_CTX * c, unsigned char *out, int *outl),
        (c, out, outl), 0)
FORWARD(crypto, int, EVP_DecryptInit_ex,
        (EVP_CIPHER_CTX * c, const EVP_CIPHER *t, ENGINE *e, const unsigned char *k,
         const unsigned char *iv),
        (c, t, e, k, iv), 0)
FORWARD(crypto, int, EVP_DecryptUpdate,
        (EVP_CIPHER_CTX * c, unsigned char *out, int *outl, const unsigned char *in, int inl),
        (c, out, outl, in, inl), 0)
FORWARD(crypto, int, EVP_DecryptFinal_ex, (EVP_CIPHER_CTX * c, unsigned char *out, int *outl),
        (c, out, outl), 0)
FORWARD(crypto, int, RAND_bytes, (unsigned char *buf, int num), (buf, num), 0)
FORWARD_VOID(crypto, OPENSSL_cleanse, (void *p, size_t n), (p, n))
/* SEC-1, JWT verification and API-key hashes (util/jwt.c, ops/auth.c). */
FORWARD_VOID(crypto, CRYPTO_free, (void *p, const char *file, int line), (p, file, line))
FORWARD(crypto, int, CRYPTO_memcmp, (const void *a, const void *b, size_t n), (a, b, n), 1)
FORWARD(crypto, const EVP_MD *, EVP_sha256, (void), (), NULL)
FORWARD(crypto, const EVP_MD *, EVP_sha384, (void), (), NULL)
FORWARD(crypto, const EVP_MD *, EVP_sha512, (void), (), NULL)
FORWARD(crypto, int, EVP_Digest,
        (const void *data, size_t n, unsigned char *md, unsigned int *len, const EVP_MD *t,
         ENGINE *impl),
        (data, n, md, len, t, impl), 0)
FORWARD(crypto, unsigned char *, HMAC,
        (const EVP_MD *md, const void *key, int klen, const unsigned char *d, size_t n,
         unsigned char *out, unsigned int *olen),
        (md, key, klen, d, n, out, olen), NULL)
FORWARD(crypto, EVP_MD_CTX *, EVP_MD_CTX_new, (void), (), NULL)
FORWARD_VOID(crypto, EVP_MD_CTX_free, (EVP_MD_CTX * c), (c))
FORWARD(crypto, int, EVP_DigestVerifyInit,
        (EVP_MD_CTX * c, EVP_PKEY_CTX **pc, const EVP_MD *t, ENGINE *e, EVP_PKEY *k),
        (c, pc, t, e, k), 0)
FORWARD(crypto, int, EVP_DigestVerify,
        (EVP_MD_CTX * c, const unsigned char *sig, size_t slen, const unsigned char *d, size_t n),
        (c, sig, slen, d, n), 0)
FORWARD(crypto, int, EVP_PKEY_CTX_set_rsa_padding, (EVP_PKEY_CTX * c, int pad), (c, pad), 0)
FORWARD(crypto, int, EVP_PKEY_CTX_set_rsa_pss_saltlen, (EVP_PKEY_CTX * c, int len), (c, len), 0)
FORWARD(crypto, EVP_PKEY_CTX *, EVP_PKEY_CTX_new_from_name,
        (OSSL_LIB_CTX * l, const char *name, const char *props), (l, name, props), NULL)
FORWARD_VOID(crypto, EVP_PKEY_CTX_free, (EVP_PKEY_CTX * c), (c))
FORWARD(crypto, int, EVP_PKEY_fromdata_init, (EVP_PKEY_CTX * c), (c), 0)
FORWARD(crypto, int, EVP_PKEY_fromdata, (EVP_PKEY_CTX * c, EVP_PKEY **k, int sel, OSSL_PARAM *p),
        (c, k, sel, p), 0)
FORWARD_VOID(crypto, EVP_PKEY_free, (EVP_PKEY * k), (k))
FORWARD(crypto, OSSL_PARAM_BLD *, OSSL_PARAM_BLD_new, (void), (), NULL)
FORWARD_VOID(crypto, OSSL_PARAM_BLD_free, (OSSL_PARAM_BLD * b), (b))
FORWARD(crypto, int, OSSL_PARAM_BLD_push_BN, (OSSL_PARAM_BLD * b, const char *k, const BIGNUM *v),
        (b, k, v), 0)
FORWARD(crypto, int, OSSL_PARAM_BLD_push_utf8_string,
        (OSSL_PARAM_BLD * b, const char *k, const char *v, size_t n), (b, k, v, n), 0)
FORWARD(crypto, int, OSSL_PARAM_BLD_push_octet_string,
        (OSSL_PARAM_BLD * b, const char *k, const void *v, size_t n), (b, k, v, n), 0)
FORWARD(crypto, OSSL_PARAM *, OSSL_PARAM_BLD_to_param, (OSSL_PARAM_BLD * b), (b), NULL)
FORWARD_VOID(crypto, OSSL_PARAM_free, (OSSL_PARAM * p), (p))
FORWARD(crypto, BIGNUM *, BN_bin2bn, (const unsigned char *s, int n, BIGNUM *r), (s, n, r), NULL)
FORWARD_VOID(crypto, BN_free, (BIGNUM * b), (b))
FORWARD(crypto, ECDSA_SIG *, ECDSA_SIG_new, (void), (), NULL)
FORWARD_VOID(crypto, ECDSA_SIG_free, (ECDSA_SIG * s), (s))
FORWARD(crypto, int, ECDSA_SIG_set0, (ECDSA_SIG * s, BIGNUM *r, BIGNUM *v), (s, r, v), 0)
FORWARD(crypto, int, i2d_ECDSA_SIG, (const ECDSA_SIG *s, unsigned char **pp), (s, pp), -1)

/* CARD-SIG-1, the signed agent card (util/jws.c, decision-066). */
FORWARD(crypto, BIO *, BIO_new_mem_buf, (const void *buf, int len), (buf, len), NULL)
FORWARD(crypto, int, BIO_free, (BIO * b), (b), 0)
FORWARD(crypto, EVP_PKEY *, PEM_read_bio_PrivateKey,
        (BIO * b, EVP_PKEY **x, pem_password_cb *cb, void *u), (b, x, cb, u), NULL)
FORWARD_VOID(crypto, ERR_clear_error, (void), ())
FORWARD(crypto, int, EVP_PKEY_is_a, (const EVP_PKEY *k, const char *name), (k, name), 0)
FORWARD(crypto, int, EVP_PKEY_get_bits, (const EVP_PKEY *k), (k), 0)
FORWARD(crypto, int, EVP_PKEY_get_utf8_string_param,
        (const EVP_PKEY *k, const char *name, char *s, size_t cap, size_t *len),
        (k, name, s, cap, len), 0)
FORWARD(crypto, int, EVP_PKEY_get_bn_param, (const EVP_PKEY *k, const char *name, BIGNUM **bn),
        (k, name, bn), 0)
FORWARD(crypto, int, EVP_PKEY_get_raw_public_key,
        (const EVP_PKEY *k, unsigned char *pub, size_t *len), (k, pub, len), 0)
FORWARD(crypto, int, EVP_DigestSignInit,
        (EVP_MD_CTX * c, EVP_PKEY_CTX **pc, const EVP_MD *t, ENGINE *e, EVP_PKEY *k),
        (c, pc, t, e, k), 0)
FORWARD(crypto, int, EVP_DigestSign,
        (EVP_MD_CTX * c, unsigned char *sig, size_t *slen, const unsigned char *d, size_t n),
        (c, sig, slen, d, n), 0)
FORWARD(crypto, ECDSA_SIG *, d2i_ECDSA_SIG, (ECDSA_SIG * *s, const unsigned char **pp, long n),
        (s, pp, n), NULL)
FORWARD_VOID(crypto, ECDSA_SIG_get0, (const ECDSA_SIG *s, const BIGNUM **r, const BIGNUM **v),
             (s, r, v))
FORWARD(crypto, int, BN_bn2binpad, (const BIGNUM *b, unsigned char *to, int n), (b, to, n), -1)
FORWARD(crypto, int, BN_num_bits, (const BIGNUM *b), (b), 0)

/* ---- libpq ------------------------------------------------------------------ */

/* What the text-returning functions give when libpq is missing (never written to). */
static char pq_missing[] = "libpq is not available";
static char pq_empty[] = "";

FORWARD(pq, PGconn *, PQconnectdb, (const char *conninfo), (conninfo), NULL)
FORWARD(pq, ConnStatusType, PQstatus, (const PGconn *c), (c), CONNECTION_BAD)
FORWARD(pq, char *, PQerrorMessage, (const PGconn *c), (c), pq_missing)
FORWARD_VOID(pq, PQfinish, (PGconn * c), (c))
FORWARD_VOID(pq, PQreset, (PGconn * c), (c))
FORWARD(pq, PGTransactionStatusType, PQtransactionStatus, (const PGconn *c), (c), PQTRANS_UNKNOWN)
FORWARD(pq, PQnoticeProcessor, PQsetNoticeProcessor,
        (PGconn * c, PQnoticeProcessor proc, void *arg), (c, proc, arg), NULL)
FORWARD(pq, PGresult *, PQexec, (PGconn * c, const char *q), (c, q), NULL)
FORWARD(pq, PGresult *, PQprepare,
        (PGconn * c, const char *name, const char *q, int n, const Oid *types),
        (c, name, q, n, types), NULL)
FORWARD(pq, PGresult *, PQexecPrepared,
        (PGconn * c, const char *name, int n, const char *const *values, const int *lengths,
         const int *formats, int result_format),
        (c, name, n, values, lengths, formats, result_format), NULL)
FORWARD(pq, PGresult *, PQexecParams,
        (PGconn * c, const char *q, int n, const Oid *types, const char *const *values,
         const int *lengths, const int *formats, int result_format),
        (c, q, n, types, values, lengths, formats, result_format), NULL)
FORWARD(pq, ExecStatusType, PQresultStatus, (const PGresult *r), (r), PGRES_FATAL_ERROR)
FORWARD(pq, char *, PQresultErrorField, (const PGresult *r, int field), (r, field), NULL)
FORWARD_VOID(pq, PQclear, (PGresult * r), (r))
FORWARD(pq, int, PQntuples, (const PGresult *r), (r), 0)
FORWARD(pq, int, PQnfields, (const PGresult *r), (r), 0)
FORWARD(pq, char *, PQgetvalue, (const PGresult *r, int row, int col), (r, row, col), NULL)
FORWARD(pq, int, PQgetisnull, (const PGresult *r, int row, int col), (r, row, col), 1)
FORWARD(pq, char *, PQcmdTuples, (PGresult * r), (r), pq_empty)
FORWARD(pq, char *, PQcmdStatus, (PGresult * r), (r), pq_empty)
FORWARD(pq, unsigned char *, PQunescapeBytea, (const unsigned char *from, size_t *len), (from, len),
        NULL)
FORWARD_VOID(pq, PQfreemem, (void *p), (p))
FORWARD(pq, int, PQsocket, (const PGconn *c), (c), -1)
FORWARD(pq, int, PQconsumeInput, (PGconn * c), (c), 0)
FORWARD(pq, PGnotify *, PQnotifies, (PGconn * c), (c), NULL)
/* Pipeline mode (SCALE-1, decision-054): a write transaction's statements whose results
 * are not needed yet go out together with the next one whose result is. */
FORWARD(pq, int, PQenterPipelineMode, (PGconn * c), (c), 0)
FORWARD(pq, int, PQexitPipelineMode, (PGconn * c), (c), 0)
FORWARD(pq, PGpipelineStatus, PQpipelineStatus, (const PGconn *c), (c), PQ_PIPELINE_OFF)
FORWARD(pq, int, PQpipelineSync, (PGconn * c), (c), 0)
FORWARD(pq, int, PQsendPrepare,
        (PGconn * c, const char *name, const char *q, int n, const Oid *types),
        (c, name, q, n, types), 0)
FORWARD(pq, int, PQsendQueryPrepared,
        (PGconn * c, const char *name, int n, const char *const *values, const int *lengths,
         const int *formats, int result_format),
        (c, name, n, values, lengths, formats, result_format), 0)
FORWARD(pq, PGresult *, PQgetResult, (PGconn * c), (c), NULL)
/* Results built on the client (SCALE-1, decision-060): a write transaction's answers
 * from what it already knows (store/pg_memo.c). */
FORWARD(pq, PGresult *, PQmakeEmptyPGresult, (PGconn * c, ExecStatusType status), (c, status), NULL)
FORWARD(pq, PGresult *, PQcopyResult, (const PGresult *r, int flags), (r, flags), NULL)
FORWARD(pq, int, PQsetResultAttrs, (PGresult * r, int n, PGresAttDesc *attrs), (r, n, attrs), 0)
FORWARD(pq, int, PQsetvalue, (PGresult * r, int row, int col, char *value, int len),
        (r, row, col, value, len), 0)
