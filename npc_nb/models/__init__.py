"""Models: ``gateway`` is the one module that imports litellm (lazily); ``offline`` and
``offline_concepts`` are the built-in offline demo model's behaviour."""
