"""Planning the human assessors (issue 16): how many human-labelled topics a calibrated leaderboard needs, which
topics to label next, how consistent the judge is with itself, and what it costs in assessor hours.

Sits at the calibration layer: imports core, ``io``, ``scoring``, ``analysis`` and ``calibration`` only.

* :mod:`.matrices`    - (topic x run) per-answer score matrices from label sets
* :mod:`.labels`      - judge votes, reference labels paired by nugget text, expected human scores given the judge
* :mod:`.precision`   - precision curves vs the number of labelled topics (analytic PPI and topic resampling)
* :mod:`.active`      - ranking topics for assessors (sequential Poisson pi-ps order + Hajek PPI), its replay check,
  and the stratified PPI leaderboard once the order was followed
* :mod:`.consistency` - k samples per judge call: flip rate, tau spread, vote fractions, soft scores
* :mod:`.budget`      - assessor hours
"""
