#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Idempotence on every example manifest in docs/: each block starting "# grove.yaml" is applied on
# a few hosts and tags (its system paths moved under a temporary root, which is also the
# alternatives' root); the second apply right after the first must change nothing and say so.
source "$(dirname "$0")/lib.sh"

: "${MANIFEST_PROBE:?MANIFEST_PROBE must name the manifest-probe helper}"
docs=("$GROVE_SOURCE_ROOT"/docs/*.md)
n_examples=0

resolve()
{
	case $1 in
	'~') printf '%s' "$HOME" ;;
	'~/'*) printf '%s/%s' "$HOME" "${1#\~/}" ;;
	/*) printf '%s' "$1" ;;
	*) printf '%s/%s' "$EX" "$1" ;;
	esac
}

for doc in "${docs[@]}"; do
	# Split the doc's yaml blocks into files; keep those that start with "# grove.yaml".
	split=$ROOT/split-$(basename "$doc" .md)
	mkdir -p "$split"
	awk -v dir="$split" '
		/^```yaml$/ { n++; inside = 1; f = sprintf("%s/%03d.yaml", dir, n); next }
		/^```$/ { inside = 0; next }
		inside { print > f }
	' "$doc"
	for block in "$split"/*.yaml; do
		[[ -e $block ]] || continue
		head -n1 "$block" | grep -q '^# grove.yaml' || continue
		n_examples=$((n_examples + 1))
		EX=$ROOT/ex-$n_examples
		SYS=$EX/sys
		export HOME=$EX/home
		mkdir -p "$HOME" "$SYS"
		# System paths of targets and profiles move under $SYS; the alternatives section's are
		# inside its root (update-alternatives' --root), which becomes $SYS.
		awk -v sys="$SYS" '
			/^[^ #]/ { alt = /^alternatives:/ }
			alt && /^alternatives:/ { print; print "  root: " sys; next }
			alt && /^  root:/ { next }
			!alt { sub(/: \/usr\//, ": " sys "/usr/"); sub(/: \/etc\//, ": " sys "/etc/")
			       sub(/: \/var\//, ": " sys "/var/") }
			{ print }
		' "$block" >"$EX/grove.yaml"
		expect_exit 0 "$MANIFEST_PROBE" "$EX/grove.yaml"
		while read -r kind a b c; do
			case $kind in
			target) mkdir -p "$(resolve "$a")" ;;
			pkg)
				d=$(resolve "$a")/$b
				[[ -d $d ]] && continue # a profile's package, already made for a target
				if [[ $c == 1 ]]; then mk_file "$d/dot-${b}rc" "$b"; else mk_file "$d/.${b}rc" "$b"; fi
				mk_file "$d/bin/$b" "$b"
				;;
			file) mk_file "$SYS$a" "$a" ;; # an alternatives file, inside the root
			esac
		done <"$OUT"
		mkdir -p "$SYS/etc/alternatives" "$SYS/var/lib/dpkg/alternatives"
		cd "$EX"
		first=1
		for sel in "laptop" "desk work" "server"; do
			read -r host tag <<<"$sel"
			expect_exit 0 "$GROVE" apply --host "$host" ${tag:+--tag "$tag"}
			if ((first)); then
				expect_out_has "applied " # the first run on empty folders changes something
				first=0
			fi
			expect_exit 0 "$GROVE" apply --host "$host" ${tag:+--tag "$tag"}
			expect_out_has "nothing to change"
			expect_exit 0 "$GROVE" apply --check --host "$host" ${tag:+--tag "$tag"}
			expect_exit 0 "$GROVE" --json apply --check --host "$host" ${tag:+--tag "$tag"}
			"$GROVE_TEST_PY" "$GROVE_SOURCE_ROOT/tests/json/validate.py" \
				"$GROVE_SOURCE_ROOT/docs/grove.schema.json" "$OUT" apply ||
				fail "apply --json does not validate: $(cat "$OUT")"
			grep -q '"changed": false, "applied": false' "$OUT" ||
				fail "--json does not say changed false"
		done
		cd "$ROOT"
		check "$(basename "$doc") example $(basename "$block" .yaml) applies, and applies again without a change"
	done
done
((n_examples >= 2)) || fail "found only $n_examples example manifests in docs/"
