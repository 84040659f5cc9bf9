#!/usr/bin/env bash
# Stores every report under results/ over 1 MiB gzip-compressed, FILE.json as
# FILE.json.gz (replacing an older FILE.json.gz): JSON with every raw sample
# packs about 12:1, and the tree travels to the device machine under a 64 MiB
# limit. gzip -9n writes no name or time, so a report compresses to the same
# bytes every time; the content is the tool's output, byte for byte
# (`zcat FILE.json.gz`). The tool and the tests read FILE.json from
# FILE.json.gz where only that exists (app/report_file.hpp), so commands and
# docs keep naming FILE.json. Run it before committing a device run's reports.
# usage: results/compress.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# gzip -9n each file of a NUL-separated list, naming what it wrote.
gzip_each() {
  local file
  while IFS= read -r -d '' file; do
    gzip -9n -f "$file"
    echo "$file.gz"
  done
}
find results -name '*.json' -size +1M -print0 | sort -z | gzip_each
# The reports of lent H100s (results/h100/) are read by people, `audit`,
# `compare`, update-readme.sh's H100 section and tests/gpu/fa3_rows_fit.py,
# all of which read FILE.json.gz, and never by a generated table of the
# H200's: those of version comparisons (*/versions/) over 64 KiB and the
# others over 256 KiB are stored compressed too, so that the tree stays under
# the device machine's transfer limit.
find results/h100 -name '*.json' \( -path '*/versions/*' -size +64k -o -size +256k \) -print0 |
  sort -z | gzip_each
# The H200's reports over 256 KiB too, except those of profile/ and decode-dev/,
# which the Python what-if scripts under tests/gpu/ read as JSON: the tool, the
# tests and update-readme.sh read FILE.json.gz.
find results/h200 -name '*.json' -size +256k -not -path '*/profile/*' -not -path '*/decode-dev/*' \
  -print0 | sort -z | gzip_each
# Nsight Compute's own reports pack 5-13:1 too; `gunzip -k FILE.ncu-rep.gz`
# gives back the file ncu wrote, which the Nsight Compute UI and `ncu --import` open.
find results -name '*.ncu-rep' -print0 | sort -z | gzip_each
# A report a device step rewrote plain, under its limit, leaves the older
# FILE.json.gz of an earlier run beside it, which commands that read a folder
# would count twice: the plain file is the newer run, so the .gz goes.
find results -name '*.json.gz' -print0 | sort -z |
  while IFS= read -r -d '' packed; do
    if [[ -f ${packed%.gz} ]]; then
      rm -f "$packed"
      echo "removed $packed: ${packed%.gz} is newer and under its limit"
    fi
  done
