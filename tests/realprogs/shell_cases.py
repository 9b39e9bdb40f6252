"""Inputs of the shell scripts in tests/realprogs/test_debian_static.py beyond zsh: Debian 12's
``bash-static`` and ``mksh`` (its static builds: ``/bin/mksh-static`` is the klibc one; the
dietlibc and musl builds and the glibc ``lksh`` run the same scripts), each script run recompiled
and under qemu-aarch64.  Scripts were written here for the features a script uses (arrays,
associative arrays, ``[[ ]]`` and regex matching, every parameter expansion form, arithmetic,
printf, read, mapfile, here-strings, process substitution, traps on EXIT/ERR/signals, a signal
to itself, subshells, pipelines and PIPESTATUS, ``set -e/-u/-o pipefail``, functions and locals,
``declare -p``, brace expansion, globbing in the run's folder).  Every case is deterministic
(no clocks, pids, random names, host names)."""

from __future__ import annotations

STDIN = b"first line\nabcdef\n"  # what every script gets on stdin (read's cases read it)

# (name, script)
BASH = [
    (
        "arrays",
        r"""
a=(one two three); echo "${a[1]}" "${#a[@]}" "${a[-1]}" "${a[@]:1:2}"
a+=(four); a[7]=seven; echo "${!a[@]}" "${a[*]}"
unset 'a[1]'; echo "${#a[@]}" "${a[@]}"
declare -A h=([k1]=v1 [k2]=v2 [k3]=v3); h[k4]=v4
for k in $(printf '%s\n' "${!h[@]}" | sort); do echo "$k=${h[$k]}"; done
echo "${#h[@]}" "${h[k2]}" "${h[nope]:-none}"
[[ -v h[k1] ]] && echo has-k1; [[ -v h[zz] ]] || echo no-zz
b=("${a[@]/#/x-}"); echo "${b[@]}"; c=("${a[@]^^}"); echo "${c[@]}"
declare -a n=(5 3 9 1); IFS=$'\n' sorted=($(sort -n <<<"${n[*]}")); unset IFS; echo "${sorted[@]}"
declare -p a; declare -p n
declare -A e=(); e[x]=1; declare -p e
m=( [2]=two [0]=zero ); echo "${m[@]}" "${!m[@]}"
""",
    ),
    (
        "cond",
        r"""
s=foo123bar
[[ $s =~ ^([a-z]+)([0-9]+)(.*)$ ]] && echo "${BASH_REMATCH[0]} ${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
re='[0-9]{2,}'; [[ ab1234 =~ $re ]] && echo "m=${BASH_REMATCH[0]}"
[[ abc == a* ]] && echo glob1; [[ abc == *d ]] || echo glob2; [[ abc == "a*" ]] || echo quoted
[[ -z "" && -n x ]] && echo zn; [[ 3 -lt 10 ]] && echo lt; [[ b > a ]] && echo gt
[[ ! -e ./no-such-file ]] && echo noexist; [[ -d / ]] && echo dir
shopt -s extglob; [[ foo.tar.gz == *.@(gz|bz2) ]] && echo ext; [[ aaa == +(a) ]] && echo plus
[[ x == !(y|z) ]] && echo neg
shopt -s nocasematch; [[ HeLLo == hello ]] && echo nocase; shopt -u nocasematch
case "x.c" in *.c) echo C;; *.h) echo H;; esac
case yes in y*) echo y ;;& *s) echo s ;; esac
case a in a) echo fall ;& b) echo through ;; esac
test 5 -eq 5 && [ "a" = "a" ] && echo test-ok
(( 5 > 3 )) && echo arith-true; (( 0 )) || echo arith-false
""",
    ),
    (
        "params",
        r"""
x=Hello-World.tar.gz
echo "${x%.*} ${x%%.*} ${x#*-} ${x##*.} ${x/o/0} ${x//o/0} ${x:0:5} ${x:6} ${#x} ${x: -6} ${x:(-2):1}"
echo "${x^^} ${x,,} ${x^} ${x~~} ${x/#Hello/Bye} ${x/%gz/xz} ${x//[aeiou]/_}"
echo "${unset1:-def} ${unset2:=assigned} $unset2 ${x:+alt} ${unset3+set} ${empty-}"
y=/usr/local/bin/bash; echo "${y##*/} ${y%/*} ${y//\//:}"
n=x; x2=ind; declare -n ref=x2; echo "${!n} $ref"; ref=changed; echo $x2
pre_a=1 pre_b=2; echo "${!pre_@}"
arr=(a b c); echo "${arr[@]@Q}" "${x@Q}" "${#arr[@]}" "${arr[@]:1}"
v='a b'; echo "${v@A}"; declare -i iv=7; echo "${iv@a}" "${arr@a}"
t='$HOME'; echo "${t@E}" "${t@P}" 2>/dev/null
: ${unset4:?is not set}
echo not reached
""",
    ),
    (
        "arith",
        r"""
echo $((7*6)) $((2**10)) $((17%5)) $((1<<4)) $(( (3+4)*2 )) $((-7/2)) $((0x1f + 8#10 + 2#101 + 36#z))
i=5; (( i += 3 )); (( i *= 2 )); echo $i $(( i > 10 ? 1 : 0 )) $((i++)) $i $((--i))
declare -i j=3; j+=4; j=j*2; echo $j
echo $(( 9223372036854775807 + 1 )) $(( 123456789 * 987654321 )) $(( ~5 )) $(( 5 ^ 3 )) $(( !0 ))
let 'k = 2 + 3' 'l = k * k'; echo $k $l
a=(1 2 3); echo $(( a[1] + a[2] )); echo $(( x = 4, x * x ))
for (( n=0; n<5; n++ )); do printf '%d ' $n; done; echo
echo $(( 10 / 0 )) 2>&1; echo after $?
""",
    ),
    (
        "printf",
        r"""
printf '%d|%5d|%-5d|%05d|%x|%X|%o|%e|%.3f|%g|%s|%10s|%-10s|%c|%%\n' 42 42 42 42 255 255 8 12345.678 3.14159 0.0001 str right left Z
printf '%s\n' a b c; printf '%s=%d\n' a 1 b 2 c
printf -v v '%03d-%s' 7 x; echo "$v"; printf -v arr[2] '%s' elem; echo "${arr[2]}"
printf '%b\n' 'tab\there' 'oct\0101'; printf '%q\n' 'a b$c' "it's"
printf '%(%Y)T\n' 0 | tr -d '\n' | wc -c
printf '%*d|%-*d|\n' 6 42 5 7; printf '%d %d\n' "'A" 0x1F
printf '%.2s|%5.1f|%+d|% d|%#x|%#o\n' abc 2.25 5 5 255 8
echo -e 'e\tscape\x41'; echo -n no-nl; echo; echo -E 'raw\t'
""",
    ),
    (
        "read",
        r"""
read a b <<< "one two three"; echo "$a|$b"
while IFS=: read -r u p rest; do echo "$u -> $rest"; done <<'END'
root:x:0:0
user:y:1000:1000
END
read -a arr <<< "x y z"; echo ${#arr[@]} ${arr[2]}
IFS=, read -r -a csv <<< "1,2,,4"; echo "${#csv[@]} [${csv[2]}]"
read -r line; echo "line=$line"
read -r -n 3 three; echo "three=$three"
read -r rest; echo "rest=$rest"
mapfile -t lines <<'END'
l1
l2
l3
END
echo ${#lines[@]} "${lines[1]}"
readarray -t -s 1 -n 2 some < <(printf '%s\n' a b c d); echo "${some[@]}"
read -d : x <<< "upto:rest"; echo $x
read -r -- raw <<< 'back\slash'; echo "$raw"; read cooked <<< 'back\slash'; echo "$cooked"
read -t 0 nothing < /dev/null; echo "t0 $?"
read eof < /dev/null; echo "eof $?"
""",
    ),
    (
        "traps",
        r"""
trap 'echo exit trap $?' EXIT
trap 'echo err trap at $LINENO' ERR
false; echo after false
trap - ERR
trap 'echo got USR1' USR1; kill -USR1 $$; echo after kill
trap 'echo got USR2; trap - USR2' USR2; kill -USR2 $$; kill -s USR2 $$ 2>/dev/null; echo unreachable-if-killed
""",
    ),
    (
        "traps2",
        r"""
trap 'echo exit trap' EXIT
f() { trap 'echo return trap' RETURN; echo in f; }; f
trap 'echo int trap' INT; kill -INT $$; echo after int
trap 'echo term trap; exit 7' TERM; kill -TERM $$; echo not reached
""",
    ),
    (
        "sub",
        r"""
x=outer; (x=inner; echo "$x"); echo "$x"
echo "$(echo nested $(echo deeper))"; v=$(printf '%s' abc); echo "${#v}"
echo a b c | tr a-z A-Z; echo "one two" | { read p q; echo "$q $p"; }
true | false | true; echo "${PIPESTATUS[@]}"; false | true; echo "${PIPESTATUS[*]}"
set -o pipefail; false | true; echo pipefail $?; set +o pipefail
printf '%s\n' c a b | sort | head -2 | tr '\n' ' '; echo
diff <(printf '%s\n' a b) <(printf '%s\n' a c); echo diff $?
while read l; do echo "ps:$l"; done < <(echo from-procsub)
exec 3> >(tr a-z A-Z); echo upper-me >&3; exec 3>&-; wait
(exit 42); echo sub $?; { echo group; } ; echo $(( $(echo 6) * 7 ))
cat <<END | wc -l
1
2
END
shopt -s lastpipe; echo lp | read lpv; echo "lastpipe=$lpv"
""",
    ),
    (
        "sete",
        r"""
set -u
f() { local x=$1; echo "f got $x"; }
f one
echo "${maybe:-default}"
set -e
g() { return 0; }; g
if false; then echo no; fi
false || echo or-ok
! false; echo bang
( set +e; false; echo inside $? )
echo before
set -o pipefail
true | false | true
echo never
""",
    ),
    (
        "setu",
        r"""
set -u
echo start
echo "${undefined_var}"
echo not reached
""",
    ),
    (
        "funcs",
        r"""
fib() { if (( $1 < 2 )); then echo $1; return; fi; echo $(( $(fib $(($1-1))) + $(fib $(($1-2))) )); }
fib 12
g() { local -i n=$1; shift; echo "n=$n rest=$# first=${1:-none}"; return $(( n % 4 )); }
g 7 a b; echo status $?
x=global; h() { local x=local; k; }; k() { echo "k sees $x"; }; h; echo $x
cnt=0; inc() { (( cnt++ )); }; for i in 1 2 3; do inc; done; echo $cnt
r() { (( $1 > 0 )) && { r $(( $1 - 1 )); printf '%s ' $1; }; return 0; }; r 5; echo
declare -f g | head -3; declare -F | wc -l
rec() { echo "${FUNCNAME[@]}"; }; outer() { rec; }; outer
alias ll='echo alias works'; shopt -s expand_aliases; eval ll
unset -f g; type g 2>&1 | head -1; type -t fib
f2() { echo "$# $*"; }; set -- a 'b c' d; f2 "$@"; f2 "$*"; shift; echo "$1"
""",
    ),
    (
        "expand",
        r"""
echo {a,b,c}{1,2} {1..5} {5..1..2} {a..e} x{,y}z {01..03}
mkdir d d/sub; touch d/a.c d/b.c d/c.h d/sub/x.c d/.hidden
echo d/*.c; echo d/?.h; echo d/[ab].c; echo d/*
shopt -s dotglob; echo d/*; shopt -u dotglob
shopt -s nullglob; echo none*; shopt -u nullglob; echo none*
shopt -s globstar; echo d/**/*.c; shopt -u globstar
shopt -s extglob
echo d/!(*.c); echo d/@(a|c).*
for f in d/*.c; do echo "${f##*/}"; done
echo ~root/x "~" $HOME
IFS=: ; set -- $(echo a:b:c); echo $#; unset IFS
s='a  b'; echo $s; echo "$s"
echo $'ansi\tc\x41' $"plain"
""",
    ),
    (
        "misc",
        r"""
declare -r ro=1; ro=2 2>/dev/null; echo "ro $?"
declare -l low=ABC; declare -u up=abc; echo $low $up
declare -x ex=1; declare -p ex low
eval 'echo eval $((1+1))'; cmd=echo; $cmd indirect
set -- z y x; for a; do echo -n "$a"; done; echo
i=0; while :; do (( i++ )); (( i > 3 )) && break; continue; done; echo $i
until (( i == 0 )); do (( i-- )); done; echo until $i
select s in one two; do echo $s; break; done <<< 2 2>/dev/null
getopts_test() { local OPTIND o; while getopts 'ab:c' o; do echo "opt $o ${OPTARG:-}"; done; shift $((OPTIND-1)); echo "rest $*"; }
getopts_test -a -b val -c file
echo ${BASH_VERSINFO[0]} $(( ${#BASH_VERSION} > 0 ))
type -t echo cd ls 2>/dev/null
command -v printf; hash -r
x=5; echo $(( x )) "$(( x + 1 ))"; printf '%s\n' "${x}"
exit 3
""",
    ),
    (
        "jobs",
        r"""
sleep 0.1 & p=$!; wait $p; echo "wait $?"
(exit 5) & wait $!; echo "bg status $?"
(exit 3) & wait; echo "all waited $?"
coproc CP { read x; echo "co:$x"; }; echo hello >&"${CP[1]}"; read -u "${CP[0]}" y; echo "$y"; wait $CP_PID; echo coproc-done $?
trap 'echo chld' CHLD; (true); wait; trap - CHLD
exec {fd}>out.txt; echo "to fd" >&$fd; exec {fd}>&-; cat out.txt
echo $(( $(jobs -p | wc -l) ))
""",
    ),
    (
        "xtrace",
        r"""
PS4='+ '; set -x; a=1; echo "$a"; f() { local b=2; echo $b; }; f; set +x
BASH_XTRACEFD=1; set -x; echo traced-to-stdout; set +x
echo "${BASH_SOURCE[0]} $LINENO ${FUNCNAME[0]:-top}"; g() { caller 0 | cut -d' ' -f1,2; }; g
printf 'echo sourced $1\nret=4\n' > lib.sh; source ./lib.sh arg; echo $ret; . ./lib.sh again
set -v; echo verbose; set +v
RANDOM=42; echo $RANDOM $RANDOM $RANDOM
echo $((SECONDS < 100)) ${#BASH_VERSION} $SHLVL $BASH_SUBSHELL $(echo $BASH_SUBSHELL)
shopt -p extglob nullglob; set -o | grep -E '^(errexit|noglob|posix) '
umask 022; umask; umask -S
ulimit -n 256; ulimit -n
kill -l 9 15; kill -l SIGUSR1
""",
    ),
    (
        "builtins",
        r"""
help echo | head -3
help -d printf cd
compgen -b | head -5; compgen -W 'alpha beta gamma' -- b; compgen -A function -X '!f*' ; f1() { :; }; compgen -A function
complete -W 'x y' foo; complete -p foo
enable -n echo; echo 2>/dev/null; type -t echo; enable echo; type -t echo
hash -t printf 2>&1 | tail -1
declare -i n=10; declare -r RO=x; declare -p n RO
printf -v s '%s,' {1..5}; echo ${s%,}
mapfile -t -C 'echo cb' -c 2 arr < <(printf '%s\n' a b c d); echo ${#arr[@]}
times >/dev/null; echo times-ok
readonly -p | grep -c RO
test -t 0; echo tty $?
echo "${PIPESTATUS[0]}"; shopt -s nocaseglob; shopt -q nocaseglob && echo nocaseglob
""",
    ),
]

MKSH = [
    (
        "arith",
        r"""
echo $((7*6)) $((17%5)) $((1<<4)) $(( (3+4)*2 )) $((-7/2)) $((16#1f + 8#10 + 2#101 + 36#z))
i=5; (( i += 3 )); (( i *= 2 )); echo $i $(( i > 10 ? 1 : 0 )) $((i++)) $i $((--i))
typeset -i j=3; j=j+4; echo $j; typeset -i16 h=255; echo $h; typeset -i2 b=10; echo $b
echo $(( 2147483647 + 1 )) $(( ~5 )) $(( 5 ^ 3 )) $(( !0 )) $(( 7 ^< 1 )) $(( 1 ^> 1 ))
let 'k = 2 + 3' 'l = k * k'; echo $k $l
i=0; while (( i < 5 )); do (( i++ )); done; echo $i
x=4; echo $(( x * x )) $(( x, x + 1 ))
echo $(( 10 / 0 ))
echo after
""",
    ),
    (
        "arrays",
        r"""
set -A a one two three; echo ${a[1]} ${#a[*]} ${a[*]}
a[5]=five; echo ${!a[*]} "${a[@]}"
unset a[0]; echo ${#a[*]} ${a[*]}
b=(x y z); echo ${b[2]} ${#b[@]}; b+=(w); echo ${b[*]}
set -A c -- 3 1 2; set -s -- ${c[*]}; echo "$@"
typeset -a d; d[3]=q; echo ${!d[@]}
e=("${b[@]}"); echo ${e[1]/y/Y} ${e[*]}
echo ${a[1]:0:2} ${#a[1]}
set +A a new; echo ${a[*]}
""",
    ),
    (
        "params",
        r"""
x=Hello-World.tar.gz
echo ${x%.*} ${x%%.*} ${x#*-} ${x##*.} ${x/o/0} ${x//o/0} ${x:0:5} ${x:6} ${#x}
echo ${x/#Hello/Bye} ${x/%gz/xz} ${unset1:-def} ${unset2:=assigned} $unset2 ${x:+alt} ${unset3+set}
typeset -u up=abc; typeset -l lo=ABC; echo $up $lo
typeset -L5 l=abcdefgh; typeset -R5 r=ab; typeset -Z4 z=7; echo "[$l] [$r] [$z]"
y=/usr/local/bin/mksh; echo ${y##*/} ${y%/*}
echo ${x@Q} ${x@#} 
nameref n=x; echo $n
v='a b  c'; echo $v "$v"
echo ${unset4?is not set}
echo not reached
""",
    ),
    (
        "cond",
        r"""
[[ abc = a* ]] && echo glob1; [[ abc = *d ]] || echo glob2; [[ abc = "a*" ]] || echo quoted
[[ -z "" && -n x ]] && echo zn; [[ 3 -lt 10 ]] && echo lt; [[ b > a ]] && echo gt
[[ foo.tar.gz = *.@(gz|bz2) ]] && echo ext; [[ aaa = +(a) ]] && echo plus; [[ x = !(y|z) ]] && echo neg
case x.c in *.c) echo C;; *.h) echo H;; esac
case yes in y*) echo y ;| *s) echo s ;; esac
case a in a) echo fall ;& b) echo through ;; esac
test 5 -eq 5 && [ a = a ] && echo test-ok
(( 5 > 3 )) && echo arith-true; (( 0 )) || echo arith-false
[[ -d / ]] && echo dir; [[ ! -e ./no-such-file ]] && echo noexist
""",
    ),
    (
        "print",
        r"""
print -r -- 'raw\t'; print 'esc\tA'; print -n no-nl; print
print -u2 to-stderr
printf '%d|%5d|%-5d|%05d|%x|%X|%o|%s|%10s|%-10s|%c|%%\n' 42 42 42 42 255 255 8 str right left Z
printf '%s\n' a b c
echo -n x; echo -e 'y\tz' 2>/dev/null
print -R -n dash; print
typeset -i2 x=5; print $x
print -- "$(print nested $(print deeper))"
""",
    ),
    (
        "read",
        r"""
read a b <<< "one two three"; echo "$a|$b"
while IFS=: read -r u p rest; do echo "$u -> $rest"; done <<'END'
root:x:0:0
user:y:1000:1000
END
read -A arr <<< "x y z"; echo ${#arr[*]} ${arr[2]}
read -r line; echo "line=$line"
read -r -n 3 three; echo "three=$three"
read -r rest; echo "rest=$rest"
read -r -- raw <<< 'back\slash'; echo "$raw"
read eof < /dev/null; echo "eof $?"
IFS=, read -r p1 p2 <<< "1,2,3"; echo "$p1 $p2"
""",
    ),
    (
        "traps",
        r"""
trap 'echo exit trap $?' EXIT
trap 'echo err trap' ERR
false; echo after false
trap - ERR
trap 'echo got USR1' USR1; kill -USR1 $$; echo after kill
trap 'echo int trap' INT; kill -INT $$; echo after int
trap 'echo term trap; exit 7' TERM; kill -TERM $$; echo not reached
""",
    ),
    (
        "sub",
        r"""
x=outer; (x=inner; echo $x); echo $x
echo a b c | tr a-z A-Z; echo "one two" | { read p q; echo "$q $p"; }
true | false | true; echo "${PIPESTATUS[*]}"
set -o pipefail; false | true; echo pipefail $?; set +o pipefail
printf '%s\n' c a b | sort | head -2 | tr '\n' ' '; echo
(exit 42); echo sub $?; { echo group; }; echo $(( $(echo 6) * 7 ))
v=$(printf '%s' abc); echo ${#v}
print -p 2>/dev/null; echo cop $?
echo coproc |& read -p cp; echo "cp=$cp"
cat <<END | wc -l
1
2
END
echo last | read lv; echo "lastpipe=$lv"
""",
    ),
    (
        "funcs",
        r"""
fib() { if (( $1 < 2 )); then echo $1; return; fi; echo $(( $(fib $(($1-1))) + $(fib $(($1-2))) )); }
fib 10
function g { typeset -i n=$1; shift; echo "n=$n rest=$# first=${1:-none}"; return $(( n % 4 )); }
g 7 a b; echo status $?
x=global; function h { typeset x=local; k; }; function k { echo "k sees $x"; }; h; echo $x
cnt=0; inc() { (( cnt++ )); }; for i in 1 2 3; do inc; done; echo $cnt
rr() { (( $1 > 0 )) && { rr $(( $1 - 1 )); print -n "$1 "; }; return 0; }; rr 5; echo
alias ll="echo alias works"
ll
unset -f g; whence -v g 2>&1; whence -v fib | head -1
f2() { echo "$# $*"; }; set -- a 'b c' d; f2 "$@"; f2 "$*"; shift; echo "$1"
set -e; false || echo or-ok; ! false; echo bang; (set +e; false; echo inside $?)
set -u; echo ${def:-x}; echo $undefined_var
echo not reached
""",
    ),
    (
        "expand",
        r"""
echo {a,b,c}{1,2} x{,y}z
mkdir d d/sub; : > d/a.c; : > d/b.c; : > d/c.h; : > d/sub/x.c; : > d/.hidden
echo d/*.c; echo d/?.h; echo d/[ab].c; echo d/*; echo none*
echo d/!(*.c); echo d/@(a|c).*
for f in d/*.c; do echo ${f##*/}; done
echo ~root/x "~"
IFS=: ; set -- $(echo a:b:c); echo $#; unset IFS
echo $'ansi\tc\x41'
getopts_test() { OPTIND=1; while getopts 'ab:c' o; do echo "opt $o ${OPTARG:-}"; done; shift $((OPTIND-1)); echo "rest $*"; }
getopts_test -a -b val -c file
eval 'echo eval $((1+1))'; cmd=echo; $cmd indirect
typeset -r ro=1; (ro=2) 2>/dev/null; echo ro $?
exit 3
""",
    ),
]

# ``bash --norc -i`` reading this on stdin (readline, history, prompts on stderr), in a session of
# its own: with no controlling terminal, job control's warning names no process group id
BASH_INTERACTIVE = r"""
echo interactive $-
x=5; echo $((x*2))
history | tail -2
for i in a b; do echo $i; done
f() { echo in-f; }; f
echo !! 2>/dev/null
fc -l -1 2>/dev/null | wc -l
alias l='echo aliased'
l
exit 4
"""
