# tests/install — `make install` into a scratch prefix and the installed program used from
# elsewhere (issue 13, decision-021).
TESTS += tests/install/install.sh
EXTRA_DIST += tests/install/install.sh
