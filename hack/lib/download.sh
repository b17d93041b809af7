# shellcheck shell=bash
# download_checked URL SUMS_URL OUT [NAME]: downloads a released file and
# checks its SHA-256 against the checksum file its project publishes beside
# it (a bare "<sha256>" file, or "<sha256>  NAME" lines), as setup-envtest and
# helm's installer do. It gives up at once where the host cannot be reached
# (no DNS, no route: a machine that only reaches package registries), and
# returns non-zero so that the caller builds from source instead. OUT is
# only written when the sum matches.
download_checked() {
  local url=$1 sums=$2 out=$3 name=${4:-}
  command -v curl >/dev/null || return 1
  local tmp
  tmp=$(mktemp "${out}.XXXXXX") || return 1
  local curlopts=(-fsSL --connect-timeout "${DBPERF_DOWNLOAD_CONNECT_TIMEOUT:-5}" --max-time "${DBPERF_DOWNLOAD_MAX_TIME:-900}")
  if ! curl "${curlopts[@]}" -o "$tmp" "$url" 2>/dev/null; then
    rm -f "$tmp"
    return 1
  fi
  local want
  if [ -n "$name" ]; then
    want=$(curl "${curlopts[@]}" "$sums" 2>/dev/null | awk -v n="$name" '{f=$2; sub(/^\*/, "", f)} f == n {print $1; exit}')
  else
    want=$(curl "${curlopts[@]}" "$sums" 2>/dev/null | awk '{print $1; exit}')
  fi
  local got
  got=$(sha256sum "$tmp" | cut -d' ' -f1)
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    printf '[download] %s: SHA-256 %s does not match %s (%s); not used\n' "$url" "$got" "${want:-nothing}" "$sums" >&2
    rm -f "$tmp"
    return 1
  fi
  mv "$tmp" "$out"
}
