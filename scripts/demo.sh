#!/usr/bin/env bash
# make demo: git memkeep on this repository's own history and memory, then a suspect appearing in a scratch clone.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi  # colour only on a terminal
say() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
note() { printf '   (%s)\n' "$*"; }

say "git memkeep lint   (this project's own agent-memory/ store)"
git memkeep lint

say "git memkeep status   (staleness from this repository's history)"
note "an entry is suspect when a commit since its last verify touched its scope; this project re-verifies its entries as the code changes"
git memkeep status || true

say "git memzoi search \"anchor diff\"   (this project's own reviewed memory, .memzoi/records/)"
git memzoi search "anchor diff"
say "git memzoi context --task \"make status faster\" --token-budget 120   (a prompt-ready pack under a budget)"
git memzoi context --task "make status faster" --token-budget 120
say "git memzoi precheck --path git_memzoi/core/gitview_pygit2.py   (risks and failed attempts before editing)"
git memzoi precheck --path git_memzoi/core/gitview_pygit2.py

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
say "scratch clone: $scratch/clone"
git clone -q . "$scratch/clone"
cd "$scratch/clone"
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.com GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.com

if git memkeep status > /dev/null; then
  say "every entry is fresh in the clone: this project re-verified its memory before its last commit"
else
  say "re-verify the entries this checkout's own history made suspect, and commit the healed anchors"
  git memkeep verify --all-safe || true
  git commit -qam "memory: re-verified" > /dev/null || true
  git memkeep status || true
fi

say "a change touches the scope of 'exit-codes' (git_memzoi/errors.py) and is committed"
printf '\n# demo: a change in scope\n' >> git_memzoi/errors.py
git commit -qam "demo: touch errors.py"
note "'one-owner-per-dependency' goes suspect too: its scope covers every module (git_memzoi/**/*.py)"
git memkeep status || true

say "the same, as JSON (one verdict per entry x reason)"
git memkeep status --json | python3 -m json.tool | head -40 || true

say "git memkeep verify --all-safe --dry-run   (what a batch re-check would run; nothing is run or written)"
git memkeep verify --all-safe --dry-run || true

say "verify exit-codes: its check still passes, so the claim is healed (anchor := HEAD)"
git memkeep verify exit-codes
git diff --stat
git memkeep status || true

say "git memzoi capture plan   (typed sections of a note become reviewable candidates; nothing is written)"
mkdir -p notes
printf '# Release notes\n\n## Decision: Verify archives\nCheck the SHA-256 of every downloaded archive.\n\n## Warning: Cache\nA cold CI cache doubles the first run.\n' > notes/demo.md
git memzoi capture plan --source notes/demo.md
note "typed Markdown sections need review: a reviewer edits each to repo, local or session memory (docs/memzoi.md)"
printf '   files written under .memzoi/ by planning: %s\n' "$(git status --short .memzoi | wc -l)"

say "git memzoi eval capture   (the project's own capture corpus: every case in its own temporary repository)"
git memzoi eval capture --corpus evals/capture/corpus.yaml --baseline evals/capture/baseline.json | grep -E "^(cases|candidate_|evidence|forbidden|hard_gates|baseline|overall)"
