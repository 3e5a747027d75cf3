"""The ``sim`` provider: a simulated fleet and load on the controller's clock.

Registered through the ``scalebridge`` entry-point group exactly like a
third-party plugin. (Being built: until it registers a provider, this plugin
registers nothing.)
"""
