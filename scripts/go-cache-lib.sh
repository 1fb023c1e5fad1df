# Sourced by the scripts that build Go programs through the module proxy into a cache entry under
# build/ (build-control-plane.sh, build-workload-controllers.sh); `name` names the script in errors.

die() {
  echo "$name: error: $*" >&2
  exit 1
}

# Sets GO ($GO, else go on PATH, else /usr/local/go/bin/go) and what it builds with: go_version,
# go_os, go_arch.
find_go() {
  GO=${GO:-}
  if [[ -n $GO ]]; then
    :
  elif command -v go > /dev/null; then GO=$(command -v go); elif [[ -x /usr/local/go/bin/go ]]; then GO=/usr/local/go/bin/go; else
    die "no go command (put Go on PATH or set GO=/path/to/go)"
  fi
  { read -r go_version && read -r go_os && read -r go_arch; } < <("$GO" env GOVERSION GOOS GOARCH) ||
    die "$GO env failed"
}

# take_cache_entry DIR RESULT MODE: ends the script, printing RESULT, where the entry DIR is complete
# (the caller's function `complete` says), or with status 1 where it is not and MODE is --built;
# otherwise takes the entry's lock, so that one build per entry runs at a time, and returns.
take_cache_entry() {
  if complete; then
    echo "$2"
    exit 0
  fi
  [[ $3 != --built ]] || exit 1
  mkdir -p "$1/logs"
  exec 9> "$1/.lock"
  flock 9
  if complete; then
    echo "$2"
    exit 0
  fi
}
