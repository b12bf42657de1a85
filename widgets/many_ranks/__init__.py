"""Many ranks: its component, its words (``text``) and what the page draws (``many_ranks.js``)."""
