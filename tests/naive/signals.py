"""Plain-Python reference twins of the signal kernels (no numpy in the algorithms)."""

import math
import re
import struct

MASK = (1 << 64) - 1
EMPTY = MASK
FNV_OFFSET, FNV_PRIME = 0xCBF29CE484222325, 0x100000001B3
ROTATION_STEP = 0x9E3779B97F4A7C15


def naive_freshness(decay, age_days, has_timestamp, valid_now, missing_value, zero_outside_window):
    out = []
    for d, a, has, valid in zip(decay, age_days, has_timestamp, valid_now):
        if zero_outside_window and not valid:
            out.append(0.0)
        elif has:
            out.append(math.exp(-d * a))
        else:
            out.append(missing_value)
    return out


def naive_cosine_pairs(vectors, threshold):
    """{(i, j): cosine} for i < j with cosine >= threshold; zero vectors are similar to nothing."""
    norms = [math.sqrt(sum(x * x for x in v)) for v in vectors]
    out = {}
    for i in range(len(vectors)):
        for j in range(i + 1, len(vectors)):
            if norms[i] == 0 or norms[j] == 0:
                cos = 0.0
            else:
                cos = sum(a * b for a, b in zip(vectors[i], vectors[j])) / (norms[i] * norms[j])
            if cos >= threshold:
                out[(i, j)] = min(max(cos, 0.0), 1.0)
    return out


def _pairwise_squares(values):
    """Σ v² in NumPy's pairwise order: below 8 values in turn; up to 128, eight interleaved sums
    combined as ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), then the rest; above, two halves split
    at a multiple of eight."""
    n = len(values)
    if n < 8:
        total = 0.0
        for v in values:
            total += v * v
        return total
    if n <= 128:
        r = [values[a] * values[a] for a in range(8)]
        k = 8
        while k < n - n % 8:
            for a in range(8):
                r[a] += values[k + a] * values[k + a]
            k += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for v in values[k:]:
            total += v * v
        return total
    half = n // 2 - (n // 2) % 8
    return _pairwise_squares(values[:half]) + _pairwise_squares(values[half:])


def naive_unit_rows(rows, limit=math.inf):
    """(each row over its norm, rounded to float32; the first row holding a NaN, an infinity or a value
    whose magnitude passes ``limit``, or -1). A zero row is divided by 1; a row whose squares overflow by
    infinity; a row whose squares sum below 1e-290 by its largest absolute value m, then by the norm of
    the row over m. Rows from the bad one on are not returned."""
    out = []
    for i, row in enumerate(rows):
        if not all(math.isfinite(v) and abs(v) <= limit for v in row):
            return out, i
        squares = _pairwise_squares(list(row))
        norm = math.sqrt(squares)
        largest = max((abs(v) for v in row), default=0.0)
        if squares < 1e-290 and largest > 0:
            root = math.sqrt(_pairwise_squares([v / largest for v in row]))
            out.append([struct.unpack("f", struct.pack("f", v / largest / root))[0] for v in row])
            continue
        scale = norm if norm > 0 else 1.0
        out.append([struct.unpack("f", struct.pack("f", v / scale))[0] for v in row])
    return out, -1


def naive_words(text):
    """Word hashes as the kernel tokenises: the words of the one word regex (written out here, not
    imported) of the lower-cased text, each hashed FNV-1a over its UTF-8 bytes."""
    hashes = []
    for word in re.findall(r"[A-Za-z0-9\u00C0-\uFFFF]+", text.lower()):
        h = FNV_OFFSET
        for b in word.encode("utf-8", "surrogatepass"):
            h = ((h ^ b) * FNV_PRIME) & MASK
        hashes.append(h)
    return hashes


def mix64(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def naive_shingles(text, k):
    return naive_word_shingles(naive_words(text), k)


def naive_word_shingles(words, k):
    """The shingle hashes of a list of word hashes."""
    if not words:
        return set()
    k = min(k, len(words))
    out = set()
    for s in range(len(words) - k + 1):
        h = k
        for m in range(k):
            h = mix64(h ^ words[s + m])
        out.add(h)
    return out


def naive_signature(text, k, bins):
    return naive_words_signature(naive_words(text), k, bins)


def naive_words_signature(words, k, bins):
    """The signature of a list of word hashes."""
    row = [EMPTY] * bins
    for h in naive_word_shingles(words, k):
        b = h % bins
        row[b] = min(row[b], mix64(h ^ ROTATION_STEP))
    if all(v == EMPTY for v in row):
        return row
    original = list(row)
    for b in range(bins):
        if original[b] == EMPTY:
            step, src = 1, (b + 1) % bins
            while original[src] == EMPTY:
                step, src = step + 1, (src + 1) % bins
            row[b] = mix64((original[src] + step * ROTATION_STEP) & MASK)
    return row


def naive_signature_similarity(a, b):
    if a[0] == EMPTY or b[0] == EMPTY:
        return 0.0
    return sum(x == y for x, y in zip(a, b)) / len(a)


def naive_jaccard(text_a, text_b, k):
    a, b = naive_shingles(text_a, k), naive_shingles(text_b, k)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def naive_differing_code_pairs(codes, group=None):
    out = []
    for i in range(len(codes)):
        for j in range(i + 1, len(codes)):
            if codes[i] < 0 or codes[j] < 0 or codes[i] == codes[j]:
                continue
            if group is not None and (group[i] < 0 or group[i] != group[j]):
                continue
            out.append((i, j))
    return out


def naive_components(n, edges):
    adjacency = {i: set() for i in range(n)}
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    labels, next_label = [-1] * n, 0
    for start in range(n):
        if labels[start] >= 0:
            continue
        stack = [start]
        labels[start] = next_label
        while stack:
            node = stack.pop()
            for other in adjacency[node]:
                if labels[other] < 0:
                    labels[other] = next_label
                    stack.append(other)
        next_label += 1
    return labels


def naive_pairs_above(rows, threshold):
    """{(i, j): share of equal bins} for i < j at or above ``threshold``, from signature rows
    (lists of ints); a row of an empty text (all EMPTY) is similar to nothing."""
    bins = len(rows[0]) if rows else 0
    need = math.ceil(threshold * bins - 1e-9)
    out = {}
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if rows[i][0] == EMPTY or rows[j][0] == EMPTY:
                continue
            same = sum(a == b for a, b in zip(rows[i], rows[j]))
            if same >= need:
                out[(i, j)] = same / bins
    return out


def naive_tile_pairs(tile, row_offset, col_offset, threshold):
    """[(i, j, weight clipped to [0, 1])] of a similarity tile, j > i, row-major order."""
    out = []
    for r, row in enumerate(tile):
        for c, value in enumerate(row):
            i, j = row_offset + r, col_offset + c
            if j > i and value >= threshold:
                out.append((i, j, min(max(value, 0.0), 1.0)))
    return out


def naive_row_pairs(tile, rows, key, limit, threshold):
    """[(min, max, weight clipped to [0, 1])] of a tile of ``rows`` against every row, row-major
    order, where key[c] > limit[r] and c is not the row itself."""
    out = []
    for r, row in enumerate(tile):
        for c, value in enumerate(row):
            a = rows[r]
            if c != a and key[c] > limit[r] and value >= threshold:
                out.append((min(a, c), max(a, c), min(max(value, 0.0), 1.0)))
    return out


def _set_columns(words, col_base, lo, hi):
    """The columns of a row of bit words (Python ints) whose bit is set, within lo .. hi, in order."""
    return [col_base + 64 * w + b for w, word in enumerate(words) for b in range(64)
            if word >> b & 1 and lo <= col_base + 64 * w + b < hi]


def naive_upper_bits(bits, count, row_offset, col_base, lo, hi):
    """[(i, j)] of an int8 bit tile's first ``count`` rows, j > i, row-major order: bit b of word w of
    row r is chunk row_offset + r against chunk col_base + 64 w + b, the columns lo .. hi only."""
    return [(row_offset + r, c) for r in range(count)
            for c in _set_columns(bits[r], col_base, lo, hi) if c > row_offset + r]


def naive_row_bits(bits, rows, key, limit, col_base, lo, hi):
    """[(min, max)] of an int8 bit tile of ``rows`` against every row (the columns lo .. hi), row-major
    order, where key[c] > limit[r] and c is not the row itself."""
    return [(min(a, c), max(a, c)) for r, a in enumerate(rows)
            for c in _set_columns(bits[r], col_base, lo, hi) if c != a and key[c] > limit[r]]


def naive_band_keys(rows, bands):
    """keys[band][t]: a hash of the band's bins of text t's signature; EMPTY for an empty text."""
    bins = len(rows[0]) if rows else 0
    per_band = bins // bands if bands else 0
    keys = [[EMPTY] * len(rows) for _ in range(bands)]
    for t, row in enumerate(rows):
        if row[0] == EMPTY:
            continue
        for band in range(bands):
            h = band
            for r in range(per_band):
                h = mix64(h ^ row[band * per_band + r])
            keys[band][t] = h
    return keys


def naive_bucket_pairs(keys, max_bucket):
    """Pairs (min, max) of texts sharing a key of one band: every pair of a bucket of at most
    ``max_bucket`` texts, a chain of neighbours (in key order, then position) for a larger one."""
    buckets = {}
    for t, key in enumerate(keys):
        if key != EMPTY:
            buckets.setdefault(key, []).append(t)
    out = set()
    for members in buckets.values():
        if len(members) <= max_bucket:
            out.update((a, b) for x, a in enumerate(members) for b in members[x + 1:])
        else:
            out.update(zip(members, members[1:]))
    return out


def naive_lsh_pairs(keys_by_band, max_bucket):
    """Per band, the set of :func:`naive_bucket_pairs` of its keys."""
    return [naive_bucket_pairs(keys, max_bucket) for keys in keys_by_band]


def naive_lsh_pair_list(keys_by_band, max_bucket):
    """The pairs of :func:`naive_lsh_pairs` in the kernel's order: band by band, buckets by their
    first text, each member's pairs (or its chain link) in text order."""
    out = []
    for keys in keys_by_band:
        buckets = {}
        for t, key in enumerate(keys):
            if key != EMPTY:
                buckets.setdefault(key, []).append(t)  # dicts keep first-appearance order
        for members in buckets.values():
            if len(members) > max_bucket:
                out.extend(zip(members, members[1:]))
            else:
                out.extend((a, b) for x, a in enumerate(members) for b in members[x + 1:])
    return out


def naive_byte_words(data):
    """The FNV-1a hashes of the words of the byte list ``data``, read byte by byte: a byte's class
    (an ASCII letter or digit, a lead byte 0xC3-0xEF: a word byte; a continuation byte 0x80-0xBF:
    the class of the last other byte) decides; any bytes, valid UTF-8 or not."""
    words, h, in_word, lead_is_word = [], None, False, False
    for b in data:
        if 0x80 <= b < 0xC0:
            is_word = lead_is_word
        else:
            is_word = chr(b).isascii() and chr(b).isalnum() or 0xC3 <= b < 0xF0
            lead_is_word = 0xC3 <= b < 0xF0
        if is_word:
            h = (0xCBF29CE484222325 if not in_word else h) ^ b
            h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
            in_word = True
        elif in_word:
            words.append(h)
            in_word = False
    return words + ([h] if in_word else [])
