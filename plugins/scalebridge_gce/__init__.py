"""The ``gce`` provider plugin (extra ``[gce]``).

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. (Being built: until it registers a provider, this plugin
registers nothing.)
"""
