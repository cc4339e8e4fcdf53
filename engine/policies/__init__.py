"""Who plays a seat: a policy name becomes a policy (``factory``), and a person in a seat (``seat``)."""
