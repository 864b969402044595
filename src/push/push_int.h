/* push_int.h — the push module's internal pieces, shared by its files and its unit tests;
 * not part of the module's contract (push.h is).
 *
 *   url.c     callback URL checks and address classes (PUSH-3)
 *   secret.c  tokens and credentials sealed with AES-256-GCM (PUSH-4)
 *   ops.c     the four config operations (PUSH-1)
 *   deliver.c the outbox sender (PUSH-2) */
#ifndef TH_PUSH_PUSH_INT_H
#define TH_PUSH_PUSH_INT_H

#include <stddef.h>
#include <sys/socket.h>

#include "util/err.h"

/* ---- url.c ------------------------------------------------------------------------------- */

/* Longest callback URL accepted, in bytes. */
#define TH_PUSH_URL_MAX 2048

/* Why the address sa may not receive pushes, as a phrase ("a loopback address"), or NULL
 * when it may. Unspecified, multicast and broadcast addresses are always refused;
 * private, loopback, link-local, shared (CGNAT) and other special-purpose ranges only
 * when allow_private is 0. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 addresses
 * are judged by the IPv4 address they carry. */
const char *th_push_addr_refusal(const struct sockaddr *sa, int allow_private);

/* Where a checked URL goes. */
struct th_push_target {
	char *host;    /* host as libcurl uses it (IPv6 in brackets); free (th_push_target_free) */
	long port;     /* the URL's port, or the scheme's default */
	char *resolve; /* CURLOPT_RESOLVE entry "host:port:addr[,addr…]" pinning the checked
	                  addresses, NULL for an IP-literal host; free */
	int transient; /* set on failure when it may pass: the host did not resolve */
};
void th_push_target_free(struct th_push_target *t);

/* Checks a callback URL (PUSH-3): absolute http:// or https://, at most TH_PUSH_URL_MAX
 * printable ASCII bytes, no user name or password, an ASCII host; the host is resolved
 * (getaddrinfo) and every address it has must pass th_push_addr_refusal. On failure
 * TH_EINVAL with a message that starts with "url" and says why, and out->transient
 * set when the host did not resolve. out (may be NULL) receives the target to connect
 * to. Never call it inside a transaction (DNS). */
th_err th_push_url_check(const char *url, int allow_private, struct th_push_target *out,
                         struct th_error *e);

/* ---- secret.c ---------------------------------------------------------------------------- */

#define TH_PUSH_KEY_ENV "TINY_HARNESS_PUSH_KEY"
#define TH_PUSH_KEY_LEN 32

/* Reads the key from TINY_HARNESS_PUSH_KEY (64 hex digits). Unset or empty →
 * TH_EUNSUPPORTED naming the variable; malformed → TH_EINTERNAL naming it (the value is
 * never echoed). */
th_err th_push_key(unsigned char key[TH_PUSH_KEY_LEN], struct th_error *e);

/* Seals plain (a NUL-terminated secret) for the field ("token" or "credentials") of
 * config config_id on task task_id: the three are authenticated with it, so a sealed
 * value copied to another config or field does not open. *blob is malloc'd (caller
 * frees): "th1" | 12-byte random nonce | ciphertext | 16-byte tag. */
th_err th_push_seal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                    const char *task_id, const char *config_id, const char *plain,
                    unsigned char **blob, size_t *len, struct th_error *e);

/* Opens a sealed value; any change to blob, key, field, task or config → TH_EINTERNAL
 * ("cannot decrypt"). *plain is malloc'd and NUL-terminated; wipe and free it with
 * th_push_secret_free. */
th_err th_push_unseal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                      const char *task_id, const char *config_id, const unsigned char *blob,
                      size_t len, char **plain, struct th_error *e);

/* Overwrites then frees a secret (NULL is fine). */
void th_push_secret_free(char *s);

/* Overwrites n bytes (keys on the stack). */
void th_push_wipe(void *p, size_t n);

#endif
