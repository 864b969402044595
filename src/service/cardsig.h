/* SPDX-License-Identifier: Apache-2.0 */
/* cardsig.h — the agent card as served: signed when card_signing_key is set (A2A 1.0
 * §8.4 AgentCardSignature; CARD-SIG-1..3, decision-066) and with its entity tag
 * (CARD-1, CARD-SIG-3).
 *
 * The payload is the RFC 8785 form of the card without `signatures` (util/jcs.c); the
 * protected header {"alg","typ":"JOSE","kid"[,"jku"]}; the signature a JWS with that
 * payload detached (util/jws.c). The key is read once per process and the signature made
 * once per process for one card, key, kid and jku (both kept in this module, under a
 * lock: a worker's request threads each build their own card from one configuration). */
#ifndef TH_SERVICE_CARDSIG_H
#define TH_SERVICE_CARDSIG_H

#include <json-c/json.h>

#include "config/settings.h"
#include "util/err.h"

#define TH_CARD_ETAG_MAX 24

/* The card as served. With cfg->card_signing_key set, card gains its `signatures`
 * member first. TH_OK with *text (compact JSON; the caller frees it with free) and etag:
 * a strong tag of the bytes for an unsigned card; for a signed one a weak tag of the
 * payload and protected header (an ES256 signature differs from process to process while
 * what it signs does not, RFC 9110 §8.8.1). On failure to sign, TH_EINTERNAL with a
 * message a client may see (no path); the cause, naming the key file, goes to the log
 * (once per process for the same cause) and to cause when it is not NULL. */
th_err th_card_serve(json_object *card, const struct th_config *cfg, char **text,
                     char etag[TH_CARD_ETAG_MAX], char *cause, size_t cause_len,
                     struct th_error *e);

/* The public JWKS ({"keys":[JWK]}, kid as the signature names it) of the configured
 * signing key as a new string (the caller frees it with free); NULL with e set (the
 * key file's trouble, naming it) or when no key is configured. */
char *th_card_jwks(const struct th_config *cfg, struct th_error *e);

#endif
