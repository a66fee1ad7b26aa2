"""Text helpers: content terms, numbers, years and stopwords (words), claims in free text (claims), what
a claim is about (claim_scope) and the compiled prefilter of claim keys (claim_keys)."""
