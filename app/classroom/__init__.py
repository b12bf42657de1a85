"""Classroom mode: an instructor runs live prediction rounds with the whole class.

A room has a short join code for learners and an unguessable key for its
instructor. In each round the instructor picks a widget, its settings and a
question; every learner sees that widget locked, predicts, and after Reveal
sees their own prediction, the class's distribution and the model's answer.
Rooms, rounds and votes live in a store behind one interface
(:class:`~app.classroom.store.RoomStore`): in this process, or in Redis shared
by several backends, whose pub/sub carries every change to every backend.
"""
