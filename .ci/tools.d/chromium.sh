# Debian's Chromium (and its driver): the review page's browser tests drive a real browser.
command -v chromium >/dev/null 2>&1 || apt_install chromium chromium-driver
