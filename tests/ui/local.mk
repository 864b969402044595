# tests/ui — A2UI in a real browser: tests/ui/index.html + app.js (bundled at test time with
# esbuild and the pinned @a2ui/lit renderer) served by lighttpd, driven in headless Debian
# Chromium through playwright-core (UI-1..UI-4, EXT-4). Exits 77 without chromium or node_modules.
TESTS += tests/ui/render.mjs
EXTRA_DIST += tests/ui
# The screenshot render.mjs leaves in the build tree ($TH_BUILDDIR/tests/artifacts/ui): make
# clean removes it, so that distcheck's distcleancheck finds the build tree empty.
CLEANFILES += tests/artifacts/ui/confirm-card.png
