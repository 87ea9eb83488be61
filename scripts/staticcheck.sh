#!/usr/bin/env bash
# Runs staticcheck, pinned in the tools/ module (honnef.co/go/tools), over
# every package of the main module: once for the plain build and once with
# -tags simplant. Any finding fails. Nothing needs to be installed by hand:
# the binary is built from tools/ on each run (cached by the go build cache).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)/staticcheck"
(cd tools && GOWORK=off GOFLAGS=-mod=readonly go build -o "$bin" honnef.co/go/tools/cmd/staticcheck)
"$bin" ./...
"$bin" -tags simplant ./...
echo "staticcheck: no findings (plain and simplant builds)"
