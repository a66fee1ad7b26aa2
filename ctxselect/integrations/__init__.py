"""Framework components (optional extras; the core never imports them): ``langchain``,
``llamaindex``, ``haystack``."""
