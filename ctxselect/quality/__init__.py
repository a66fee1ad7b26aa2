"""The six-number quality vector, the gate, and the report that inspect() returns."""
