# The run's own table, read by its table name and by its file name, as models often do.
# expect: ok
# stdout: ^3 3 3\n$
# tables: own
import pandas as pd

by_name = pd.read_csv("own.csv")
by_file = pd.read_csv("{{OWN_FILE}}")
print(len(by_name), len(by_file), len(df))
