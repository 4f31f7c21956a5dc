"""Models: ``gateway`` is the one module that imports litellm (lazily; ``preload`` starts
that import in the background when the notebook extension loads, and ``credentials``
refuses a call with no key before it); ``recording`` records and replays its calls
(``model_replay``); ``offline`` and ``offline_concepts`` are the built-in offline demo
model's behaviour."""
