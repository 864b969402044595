# tests/ui — A2UI in a real browser: tests/ui/index.html + app.js (bundled at test time with
# esbuild and the pinned @a2ui/lit renderer) served by lighttpd, driven in headless Debian
# Chromium through playwright-core (UI-1..UI-4, EXT-4). Exits 77 without chromium or node_modules.
TESTS += tests/ui/render.mjs
# The web app (WEB-1..WEB-3): bundle.mjs checks that the committed web/dist is what
# `node web/build.mjs` makes; webapp.mjs drives the app served at <base>ui/ by lighttpd with
# 2 workers in headless Chromium, by role and label only, resuming streams with Last-Event-ID
# (STREAM-RESUME-2, decision-072) and showing a participant their push dead letters (RET-4);
# webapp-state.mjs: a task that is over, the conversation's order against a slow network,
# identity and ?debug (WEB-4..WEB-6).
TESTS += tests/ui/bundle.mjs tests/ui/webapp.mjs tests/ui/webapp-state.mjs
# Named file by file: a directory here would also copy the build tree's tests/ui (its .log
# and .trs files) into the tarball, and distcheck's read-only copy then breaks the test run.
EXTRA_DIST += tests/ui/index.html tests/ui/app.js tests/ui/render.mjs tests/ui/bundle.mjs \
	tests/ui/webapp.mjs tests/ui/webapp-state.mjs
# The screenshot render.mjs leaves in the build tree ($TH_BUILDDIR/tests/artifacts/ui): make
# clean removes it, so that distcheck's distcleancheck finds the build tree empty.
CLEANFILES += tests/artifacts/ui/confirm-card.png
# The screenshots webapp.mjs leaves in $TH_BUILDDIR/tests/artifacts/web.
CLEANFILES += tests/artifacts/web/task-list-390.png tests/artifacts/web/task-list-1280.png \
	tests/artifacts/web/task-390.png tests/artifacts/web/task-1280.png \
	tests/artifacts/web/task-card-1280.png tests/artifacts/web/task-channels-1280.png \
	tests/artifacts/web/web-app-1280.png tests/artifacts/web/task-over-1280.png \
	tests/artifacts/web/task-debug-1280.png tests/artifacts/web/dead-letters-1280.png
