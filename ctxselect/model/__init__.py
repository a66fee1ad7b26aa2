"""The data model: candidates, requirements, token counting, times, validation and dump files (the bottom stage)."""
