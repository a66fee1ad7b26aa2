"""The demonstration dump: a help desk's retrieval, with the failures greedy assemblers have.

:func:`demo_queries` builds, deterministically from a seed, tens of support questions about a
software product (refunds, seats, SSO, exports, data retention ...). Each question's candidates
are what a retriever returns from the help center, the policy pages, the runbooks, the status page,
the community forum and the internal wiki:

* the **current** policy page (gold) and, for most topics, its **superseded version** — often the
  most relevant hit, because it has been linked longer — stating another figure;
* the **procedure** (gold) and sometimes a **near-duplicate** copy of it in the FAQ;
* the **status page** entry (gold, a required source) that retrievers rank low;
* a **forum post** quoting a wrong figure (a conflicting field);
* an **internal** note the support agent's scopes do not admit, highly relevant;
* other topics' pages as distractors.

Proportions are drawn per query from the seed (about two queries in three carry a stale version,
half a forum post, two in five a near-duplicate and an internal note), and ``selected`` is what a
plain top-k assembler sends (relevance order until the budget is full, blind to scopes and
versions). ``examples/demo.jsonl`` is ``ctxselect gen --demo`` output: the README's main job runs
on it. The texts are written for this demo; any likeness to a real product's policy is chance.
"""

from __future__ import annotations

import numpy as np

from ctxselect.model.io import Query
from ctxselect.model.tokens import default_token_counter

__all__ = ["TOPICS", "demo_queries", "DEMO_NOW"]

DEMO_NOW = "2026-11-01T00:00:00Z"

#: (topic, fact field, old value, new value, unit, policy sentence, steps, status, questions)
TOPICS = [
    ("refund", "refund_window_days", 14, 30, "days",
     "Annual plans can be refunded in full within {v} days of purchase; after that the unused months are "
     "credited to the account.",
     "How to issue a refund: open the customer in the billing console, check the purchase date against the "
     "refund window, choose Refund, then Full or Prorated, and add the ticket number as the reason.",
     "Status: the billing console and the refunds API are operational.",
     ["A customer cancelled their annual plan {d} days after purchase. Can they get a refund, and how?",
      "Is a refund still possible {d} days into an annual subscription?",
      "How do I refund an annual plan bought {d} days ago?",
      "Customer asks for their money back {d} days after buying the yearly plan. What do I do?"]),
    ("seats", "max_seats_team", 25, 50, "seats",
     "The Team plan includes up to {v} seats; larger organisations move to the Business plan.",
     "To add seats: open Admin, then Members, choose Add seats, enter the number and confirm the prorated "
     "charge shown at the bottom of the dialog.",
     "Status: the admin console and seat management are operational.",
     ["Can a Team plan customer add {d} more seats?", "What is the seat limit on Team, and how do I add seats?",
      "A team of {d} people wants the Team plan. Does it fit?", "How many users can a Team workspace have?"]),
    ("sso", "sso_min_plan_price", 20, 12, "dollars",
     "Single sign-on (SAML) is available on every plan from ${v} per user per month.",
     "To set up SAML: in Admin, open Security, choose SAML SSO, paste the identity provider's metadata URL, "
     "map the email attribute and test the login with a second browser before enforcing it.",
     "Status: the login service and SAML endpoints are operational.",
     ["Which plan do I need for SSO, and how do I set it up?", "Customer wants SAML with Okta. What plan and steps?",
      "Is single sign-on included for a {d}-person company on the cheapest plan?", "How to enable SAML SSO?"]),
    ("export", "export_retention_days", 7, 14, "days",
     "Data exports stay available for download for {v} days, then they are deleted.",
     "To export workspace data: open Admin, then Data, choose Export, pick JSON or CSV, and wait for the "
     "email with the download link.",
     "Status: exports are delayed by about an hour because of high load.",
     ["How long can a customer download their export, and how do they start one?",
      "Customer's export link from {d} days ago stopped working. Why?", "How do I export all workspace data?",
      "Where is the export download link and how long does it last?"]),
    ("retention", "deleted_retention_days", 60, 30, "days",
     "Deleted workspaces are kept for {v} days and can be restored by support during that time.",
     "To restore a deleted workspace: find it in the support console under Deleted, check the owner's "
     "identity, click Restore and tell the owner that integrations must be reconnected.",
     "Status: the support console is operational.",
     ["A workspace was deleted {d} days ago by mistake. Can we restore it?", "How long are deleted workspaces kept?",
      "Customer deleted their workspace last week. How do I bring it back?", "Restore a deleted workspace?"]),
    ("storage", "free_storage_gb", 2, 5, "GB",
     "The Free plan includes {v} GB of file storage per workspace.",
     "To check storage use: open Admin, then Usage; the storage bar lists the largest files, which the owner "
     "can delete or move to an archive.",
     "Status: file uploads are operational.",
     ["How much storage does the Free plan have?", "Customer on Free hit the storage limit at {d} GB. What now?",
      "What is the file storage limit for free workspaces?", "How do I see what uses storage on a free workspace?"]),
    ("api", "api_rate_limit_per_min", 60, 120, "requests per minute",
     "The public API allows {v} requests per minute per token; more return HTTP 429 with a Retry-After header.",
     "To raise throughput: batch writes with the bulk endpoints, honour Retry-After, and spread work over "
     "several tokens only where the terms allow it.",
     "Status: the public API is degraded: elevated latency in the EU region.",
     ["What is the API rate limit and what happens above it?", "Customer gets HTTP 429 at {d} requests a minute. Why?",
      "How many API calls per minute are allowed?", "How should an integration handle 429 responses?"]),
    ("trial", "trial_days", 30, 14, "days",
     "The free trial of paid plans lasts {v} days; no card is needed to start it.",
     "To extend a trial: in the support console open the workspace, choose Trial, then Extend, and pick up to "
     "14 more days with a reason.",
     "Status: sign-up and trials are operational.",
     ["How long is the trial, and can support extend it?", "A prospect is on day {d} of the trial. How long is left?",
      "Can I give a customer more trial days?", "Does the trial need a credit card, and how long is it?"]),
    ("invoice", "invoice_due_days", 15, 30, "days",
     "Invoices are due {v} days after issue; reminders go out on the due date and a week later.",
     "To resend an invoice: open Billing, then Invoices, choose the invoice, click Resend and add any extra "
     "recipient address the customer asked for.",
     "Status: invoice emails are delayed by up to two hours.",
     ["When is an invoice due, and how do I resend one?", "Customer says the invoice from {d} days ago is overdue. Is it?",
      "How many days do customers have to pay an invoice?", "Resend an invoice to the finance team?"]),
    ("uptime", "uptime_sla_percent", 99.5, 99.9, "percent",
     "Business plans carry a {v} % monthly uptime commitment, with service credits below it.",
     "To claim a service credit: collect the incident IDs from the status history, open a billing ticket "
     "within 30 days of the month's end and attach them.",
     "Status: all systems operational; last incident resolved 2026-10-29.",
     ["What uptime do we promise Business customers, and how are credits claimed?",
      "Customer had {d} hours of downtime. Do they get a credit?", "What is the uptime SLA?",
      "How does a customer claim an SLA credit?"]),
]

_INTERNAL = ("INTERNAL ONLY. For {topic} cases flagged by the risk team, do not act without approval from an "
             "analyst; the flagging criteria must never be shared with customers.")
_FORUM = "Community forum: support told me it is {v} {unit}, so that is what I went with for {topic}."
_FAQ_PREFIX = "FAQ: "
_DISTRACTOR = "Product update: {topic} now has a redesigned settings page and a new help article index."


def _candidate(cid, source, text, relevance, timestamp, *, scope="public", aspects=(), fields=None, **extra):
    out = {"id": cid, "source": source, "scope": scope, "tokens": default_token_counter(text),
           "relevance": round(float(relevance), 3), "timestamp": timestamp, "text": text}
    if aspects:
        out["aspects"] = list(aspects)
    if fields:
        out["fields"] = dict(fields)
    out.update(extra)
    return out


def _query(rng: np.random.Generator, k: int, topic_index: int, variant: int) -> dict:
    name, field, old, new, unit, policy, steps, status, questions = TOPICS[topic_index]
    question = questions[variant].format(d=int(rng.integers(3, 40)))
    qid = f"demo-{k:02d}-{name}"
    cands = [
        _candidate(f"{name}-policy-v3", "policy", f"{name.title()} policy (v3, effective 2026-09-01). "
                   + policy.format(v=new), rng.uniform(0.80, 0.92), "2026-09-01T09:00:00Z",
                   aspects=["policy"], fields={field: new}, doc_id=f"{name}-policy", version="3"),
        _candidate(f"{name}-steps", "procedure", steps, rng.uniform(0.62, 0.85), "2026-08-15T12:00:00Z",
                   scope="support", aspects=["steps"]),
        _candidate(f"{name}-status", "status", status, rng.uniform(0.35, 0.6), "2026-10-31T22:00:00Z",
                   aspects=["availability"]),
    ]
    gold = [c["id"] for c in cands]
    if rng.random() < 0.65:  # the superseded version, linked longer: often the top hit
        cands.append(_candidate(f"{name}-policy-v2", "policy", f"{name.title()} policy (v2, effective 2025-03-01). "
                                + policy.format(v=old), rng.uniform(0.86, 0.97), "2025-03-01T09:00:00Z",
                                aspects=["policy"], fields={field: old}, doc_id=f"{name}-policy", version="2",
                                valid_to="2026-08-31T23:59:59Z"))
    if rng.random() < 0.5:  # a forum post quoting a wrong figure
        wrong = old if rng.random() < 0.5 else type(new)(new * 2)
        cands.append(_candidate(f"{name}-forum", "community", _FORUM.format(v=wrong, unit=unit, topic=name),
                                rng.uniform(0.6, 0.8), "2026-06-01T17:30:00Z", fields={field: wrong}))
    if rng.random() < 0.4:  # the procedure copied into the FAQ
        cands.append(_candidate(f"{name}-steps-faq", "faq", _FAQ_PREFIX + steps, rng.uniform(0.6, 0.84),
                                "2026-07-01T12:00:00Z", aspects=["steps"]))
    if rng.random() < 0.4:  # the internal wiki: relevant, not for this caller
        cands.append(_candidate(f"{name}-internal", "wiki", _INTERNAL.format(topic=name), rng.uniform(0.8, 0.93),
                                "2026-10-02T08:00:00Z", scope="internal", aspects=["policy"]))
    others = [t for t in range(len(TOPICS)) if t != topic_index]
    for t in rng.choice(others, size=int(rng.integers(6, 10)), replace=False).tolist():
        other = TOPICS[t]
        if rng.random() < 0.5:
            text, source = f"{other[0].title()} policy (v3). " + other[5].format(v=other[3]), "policy"
        else:
            text, source = _DISTRACTOR.format(topic=other[0]), "blog"
        cands.append(_candidate(f"{other[0]}-{source}-for-{name}", source, text, rng.uniform(0.25, 0.7),
                                "2026-05-01T10:00:00Z"))
    order = rng.permutation(len(cands))
    cands = [cands[i] for i in order]
    budget = int(sum(c["tokens"] for c in cands if c["id"] in gold) * rng.uniform(1.3, 1.7))
    sent, used = [], 0
    for c in sorted(cands, key=lambda c: -c["relevance"]):  # top-k: blind to scopes and versions
        if used + c["tokens"] <= budget:
            sent.append(c["id"])
            used += c["tokens"]
    return {"query_id": qid, "query": question, "requirements": {
        "token_budget": budget, "required_aspects": {"policy": 0.5, "steps": 0.3, "availability": 0.2},
        "required_sources": ["policy", "procedure", "status"], "allowed_scopes": ["public", "support"],
        "conflict_fields": [field], "now": DEMO_NOW, "half_life_days": 180},
        "candidates": cands, "gold": gold, "selected": sent, "meta": {"topic": name}}


def demo_queries(queries: int = 40, seed: int = 0) -> list[Query]:
    """The demonstration dump (see the module docstring): ``queries`` questions cycling through
    the topics, deterministic from ``seed``."""
    rng = np.random.default_rng(seed)
    return [Query.from_dict(_query(rng, k, k % len(TOPICS), (k // len(TOPICS)) % 4)) for k in range(queries)]
