"""Audited batches: approve a batch of plain candidates on the evidence of a seeded
random sample of it, with an upper bound on the error rate of what nobody looked at.

``service`` (``AuditService``: start, result, pending, extend, approve_rest, review_rest)
composes the modules beside it: ``selection`` (which open cards form the batch, and why
the others are set aside), ``sampling`` (the seeded, optionally stratified order whose
prefixes are the samples), ``outcomes`` (the sampled cards' decisions as errors),
``result`` (``AuditResult``), ``naming`` (the reason a batch approval records, and
every refusal), ``sign_offs`` (independent review: the batch approval needs as many
reviewers' sign-offs as the policy asks) and ``report`` (each audit as
``nb.metrics.audits()`` and a bundle's manifest state it). The statistics
(``plan_audit``) sit in the analytics layer above; the facade hands them in
(``Planning``). The audit tables are read and written by
``store.memories.audit_rows`` only.
"""

from .result import AuditResult
from .service import AuditService, Plan, Planning

__all__ = ["AuditResult", "AuditService", "Plan", "Planning"]
