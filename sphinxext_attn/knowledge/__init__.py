"""vLLM's world, plugged into the evaluator from outside it: what the analysed code
reaches beyond the tree answers as on the reference machine (:mod:`.machine`),
the platform vLLM's own detection finds (:mod:`.devices`), the engine config
(:mod:`.engine_config`), a platform plugin's registry overrides
(:mod:`.plugin_registry`) and the feature probes of installed dependencies
(:mod:`.probes`). The evaluator (``pyeval``) names none of this: a
:class:`~sphinxext_attn.knowledge.machine.Machine` is the
:class:`~sphinxext_attn.pyeval.world.World` an interpreter is given."""
