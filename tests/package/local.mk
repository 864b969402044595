# tests/package — the Debian package (PKG-2, decision-024): dpkg-buildpackage, lintian,
# dpkg -i, the installed program serving the card, dpkg --purge. Root only.
TESTS += tests/package/deb.sh
EXTRA_DIST += tests/package/deb.sh debian
