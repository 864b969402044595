/* SPDX-License-Identifier: Apache-2.0 */
/* netaddr.h — the address rules of the trusted-header identity mode (SEC-1): is a
 * client address loopback, is it in an operator's list of addresses and CIDR blocks,
 * and is a base URL's host a loopback name. Addresses are compared as bytes after
 * inet_pton, so "::ffff:127.0.0.1" and "127.0.0.1" are the same client. */
#ifndef TH_UTIL_NETADDR_H
#define TH_UTIL_NETADDR_H

#include "util/err.h"

/* 1 when addr is an IPv4 address in 127.0.0.0/8, ::1, or an IPv4-mapped IPv6 form of
 * a 127/8 address; 0 otherwise, including NULL, "" and anything not an address. */
int th_addr_is_loopback(const char *addr);

/* 1 when addr matches an entry of list: entries are addresses or ADDRESS/PREFIX blocks
 * separated by spaces or commas. 0 for NULL or empty list or addr. */
int th_addr_in_list(const char *addr, const char *list);

/* TH_OK when every entry of list parses (an address, or ADDRESS/PREFIX with a prefix
 * no longer than the address); else TH_EINVAL naming key and the entry. */
th_err th_addr_list_check(const char *key, const char *list, struct th_error *e);

/* 1 when url (http[s]://[user@]host[:port]/…) names a loopback host: "localhost", a
 * name ending in ".localhost" (RFC 6761), a 127/8 address or [::1]. */
int th_url_host_is_loopback(const char *url);

#endif
