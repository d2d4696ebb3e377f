# Reads the record files named on the command line with the `cchess` package (an independent
# reader of PGN and XQF) and prints, per file, one JSON line: the main line in ICCS and the result.
import json
import sys

from cchess import Game

for name in sys.argv[1:]:
    game = Game.read_from(name)
    lines = game.dump_iccs_moves()
    moves = lines[0] if lines else []
    print(json.dumps({"file": name, "moves": [m.replace("-", "").lower() for m in moves],
                      "result": game.info.get("result", "*")}))
