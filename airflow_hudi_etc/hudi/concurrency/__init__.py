"""Running next to Java writers that never stop: Hudi's write settings as the table's writers
have them (:mod:`.write_config`), Hudi's table lock (:mod:`.locks`, one module per provider),
Hudi's optimistic-concurrency conflict rule (:mod:`.conflicts`) and the one commit path every
instant of ours is completed through (:mod:`.transaction`)."""
