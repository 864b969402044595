# tests/cgi
