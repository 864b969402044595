# tests/contract — the agent card and the extension payloads against the committed snapshot
# and JSON Schemas (CARD-1..CARD-4), plus the card's unit suite.
check_PROGRAMS += tests/unit/check_card
TESTS += tests/unit/check_card
tests_unit_check_card_SOURCES = tests/unit/check_card.c
tests_unit_check_card_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_check_card_LDADD = src/service/libth_service.la src/domain/libth_domain.la \
	src/util/libth_util.la $(CHECK_LIBS) $(TH_LIBS)

# test_agent_card.py is run directly (executable, python3 from the system); its name is the one
# the project's brief gives for the card's contract test.
TESTS += tests/contract/test_agent_card.py tests/contract/schemas.mjs
EXTRA_DIST += tests/contract/test_agent_card.py tests/contract/agent-card.json \
	tests/contract/schemas.mjs tests/contract/lib.mjs
