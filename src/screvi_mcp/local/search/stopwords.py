"""English stopwords dropped from keyword queries.

They carry no topic, and with an all-terms match they would only make a highlight that uses
other function words miss. Kept inside quoted phrases, where word order needs them.
"""

from __future__ import annotations

_WORDS = """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just let me more most mustn
    my myself no nor not of off on once only or other ought our ours ourselves out over own
    same shan she should shouldn so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was wasn we were weren what
    when where which while who whom why will with won would wouldn you your yours yourself
    yourselves s t d ll m re ve
    also anything something someone somebody thing things get got ever really
    find show tell give quote quotes highlight highlights passage passages say says said
"""

STOPWORDS: frozenset[str] = frozenset(_WORDS.split())
