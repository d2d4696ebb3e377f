#!/usr/bin/env python3
"""Cross-check `chuhe rules batch` against pyffish (Fairy-Stockfish) along random games.

    pip install pyffish
    cargo build -p chuhe
    python3 crates/rules/scripts/crosscheck_legal.py [path/to/chuhe]

For every position of 60 seeded random games (up to 200 plies each) it compares the sorted legal
moves; it prints the mismatches and their count, and exits non-zero if there is any. A one-off
check for developers (pyffish is never needed to build or test the crate).
"""
import json
import random
import re
import subprocess
import sys

import pyffish as sf

V = "xiangqi"
CHUHE = sys.argv[1] if len(sys.argv) > 1 else "target/debug/chuhe"


def iccs(m):
    """Fairy-Stockfish numbers ranks 1-10; ICCS 0-9."""
    mm = re.match(r"([a-i])(\d+)([a-i])(\d+)$", m)
    return f"{mm[1]}{int(mm[2]) - 1}{mm[3]}{int(mm[4]) - 1}"


def main():
    lines, expect = [], []
    for seed in range(100, 160):
        rng = random.Random(seed)
        fen, moves = sf.start_fen(V), []
        for _ in range(200):
            legal = sf.legal_moves(V, fen, moves)
            lines.append(json.dumps({"fen": "startpos", "moves": [iccs(m) for m in moves]}))
            expect.append(sorted(iccs(m) for m in legal))
            if not legal:
                break
            moves.append(rng.choice(sorted(legal)))
    out = subprocess.run([CHUHE, "rules", "batch"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    bad = 0
    for line, o, e in zip(lines, out, expect):
        o = json.loads(o)
        if "error" in o or o["legal"] != e:
            bad += 1
            print(line, o.get("error"), sorted(set(o.get("legal", [])) ^ set(e)))
    print(f"pyffish {'.'.join(map(str, sf.version()))}: {len(lines)} positions, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
