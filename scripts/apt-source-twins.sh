# SPDX-License-Identifier: MIT
# apt-source-twins.sh: sourced by the scripts that need apt to see a kind of package index this
# machine's sources do not name yet (fetch-peer-mimalloc.sh: the source packages;
# setup-win32-emulation.sh: the release's backports). Such an entry is never written from a host
# name of our own: it is a twin of an entry the machine already has, with the same URIs,
# components, key and options, and only its type or its suite changed.
#
#   apt_source_twins NAME WRITER PURPOSE TYPE [SUITE NEW_SUITE]
#
# Reads every deb entry of /etc/apt/sources.list and /etc/apt/sources.list.d/ (deb822 stanzas
# whose Types names deb, and one-line `deb` lines), except the files fastmm-c wrote (their names
# begin with fastmm-c-), and writes their twins, of type TYPE:
#   - without SUITE, every entry, with its suites as they are (TYPE deb-src: their sources);
#   - with SUITE, the entries that name SUITE, with their suites replaced by NEW_SUITE alone.
# The deb822 twins go to /etc/apt/sources.list.d/NAME.sources, the one-line twins to NAME.list
# (each line keeps its [options]), each file headed by a comment naming WRITER and PURPOSE.
# Stanzas marked `Enabled: no` are left out. Needs root, or sudo. Prints the files it wrote, one
# a line; returns 1 when no entry matched (and writes nothing then), 2 when a file could not be
# written (the reason on standard error). FASTMM_APT_ETC names another directory than /etc/apt
# to read and write (tests/scripts/test_apt_source_twins.sh gives it its fixtures).
apt_source_twins() {
  local name=$1 writer=$2 purpose=$3 type=$4 suite=${5:-} new_suite=${6:-}
  local etc=${FASTMM_APT_ETC:-/etc/apt} sudo="" f out kind rc=1
  [ "$(id -u)" = 0 ] || [ -w "$etc/sources.list.d" ] || sudo=sudo
  local d822 dline
  d822=$(mktemp)
  dline=$(mktemp)
  for f in "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    case "${f##*/}" in fastmm-c-*) continue ;; esac
    awk -v type="$type" -v suite="$suite" -v new_suite="$new_suite" '
      function flush() {
        if (deb == 1 && (suite == "" || named) && n) {
          print "Types: " type
          for (i = 1; i <= n; i++) print body[i]
          print ""
        }
        deb = 0; named = 0; n = 0
      }
      /^[[:space:]]*$/ { flush(); next }
      /^#/ { next }
      /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb" && deb == 0) deb = 1; next }
      /^Enabled:/ && tolower($2) == "no" { deb = -1; next }
      suite != "" && /^Suites:/ {
        for (i = 2; i <= NF; i++) if ($i == suite) named = 1
        body[++n] = "Suites: " new_suite
        next
      }
      { body[++n] = $0 }
      END { flush() }' "$f" >>"$d822"
  done
  for f in "$etc"/sources.list "$etc"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    case "${f##*/}" in fastmm-c-*) continue ;; esac
    # A line is `deb [options] URI SUITE COMPONENT...`: the type is the first field, and the
    # suite the only field that can equal a release's name.
    awk -v type="$type" -v suite="$suite" -v new_suite="$new_suite" '
      $1 != "deb" { next }
      suite == "" { $1 = type; print; next }
      {
        for (i = 3; i <= NF; i++) if ($i == suite) { $1 = type; $i = new_suite; print; break }
      }' "$f" >>"$dline"
  done
  for kind in sources list; do
    if [ "$kind" = sources ]; then out=$d822; else out=$dline; fi
    [ -s "$out" ] || continue
    if ! {
      echo "# Written by fastmm-c's $writer: the $type twins of this machine's own"
      echo "# package sources${suite:+ (suite $suite as $new_suite)}, $purpose. Safe to remove."
      cat "$out"
    } | $sudo tee "$etc/sources.list.d/$name.$kind" >/dev/null; then
      echo "apt-source-twins: cannot write $etc/sources.list.d/$name.$kind" >&2
      rc=2
      break
    fi
    echo "$etc/sources.list.d/$name.$kind"
    rc=0
  done
  rm -f "$d822" "$dline"
  return $rc
}
