"""The selection problem, its objective and constraints, the solvers, reasons, and select()."""
