"""Text helpers: the word tokenizer, numbers, years and stopwords (words), and claims in free text (claims)."""
