"""The ``aws`` provider plugin (extra ``[aws]``).

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. (Being built: until it registers a provider, this plugin
registers nothing.)
"""
