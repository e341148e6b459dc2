"""Sum the amounts in data.csv and print the total."""

import csv
from pathlib import Path

rows = list(csv.DictReader(Path(__file__).with_name("data.csv").open()))
total = sum(float(row["amount"]) for row in rows)
print(f"{len(rows)} rows, total {total:.2f}")
