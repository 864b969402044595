# tests/cgi — black-box tests of the program run as plain CGI (environment + stdin).
# test.sh also runs cgi.sh under valgrind through TH_WRAP.
TESTS += tests/cgi/cgi.sh
EXTRA_DIST += tests/cgi/cgi.sh tests/cgi/prep.c
# decision-094: the program as configure links it by default has SQLite linked in, which
# tests/cgi/prep.c cannot interpose on; cgi.sh counts a CGI GetTask's statements on this
# copy of the same code linked against the shared libraries.
check_PROGRAMS += tests/cgi/tiny-harness-shared
tests_cgi_tiny_harness_shared_SOURCES = src/main.c
tests_cgi_tiny_harness_shared_LDADD = src/libth.la $(TH_LIBS)
