/* SPDX-License-Identifier: Apache-2.0 */
/* push_int.h — the push module's internal pieces, shared by its files and its unit tests;
 * not part of the module's contract (push.h is).
 *
 *   url.c     callback URL checks and address classes (PUSH-3)
 *   secret.c  tokens and credentials sealed with AES-256-GCM (PUSH-4)
 *   deliver.c the outbox sender (PUSH-2) */
#ifndef TH_PUSH_PUSH_INT_H
#define TH_PUSH_PUSH_INT_H

#include <sys/socket.h>

#include "push/push.h"

/* ---- url.c ------------------------------------------------------------------------------- */

/* Why the address sa may not receive pushes, as a phrase ("a loopback address"), or NULL
 * when it may. Unspecified, multicast and broadcast addresses are always refused;
 * private, loopback, link-local, shared (CGNAT) and other special-purpose ranges only
 * when allow_private is 0. IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 addresses
 * are judged by the IPv4 address they carry. th_push_url_check applies it to every
 * address a host resolves to, deliver.c to every socket libcurl opens. */
const char *th_push_addr_refusal(const struct sockaddr *sa, int allow_private);

#endif
