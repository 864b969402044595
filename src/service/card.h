/* SPDX-License-Identifier: Apache-2.0 */
/* card.h — the agent card (CARD-1..CARD-3), built from configuration and the
 * command registry. */
#ifndef TH_SERVICE_CARD_H
#define TH_SERVICE_CARD_H

#include <json-c/json.h>

#include "config/settings.h"

/* Builds the public AgentCard. commands is a borrowed JSON array of
 * {"name","description","argument_hint"} objects (the commands extension's params).
 * Returns a new reference, NULL on allocation failure. */
json_object *th_card_build(const struct th_config *cfg, json_object *commands);

#endif
