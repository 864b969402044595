# tests/cgi — black-box tests of the program run as plain CGI (environment + stdin).
# test.sh also runs cgi.sh under valgrind through TH_WRAP.
TESTS += tests/cgi/cgi.sh
EXTRA_DIST += tests/cgi/cgi.sh tests/cgi/prep.c
