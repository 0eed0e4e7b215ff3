"""factory-boy factories for the models every test needs."""

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from sessions.models import Entity, Message, Session
from teams.models import Membership, Project, Role, Team


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class TeamFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Team

    name = factory.Sequence(lambda n: f"Team {n}")
    slug = factory.Sequence(lambda n: f"team-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    team = factory.SubFactory(TeamFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.MEMBER


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    team = factory.SubFactory(TeamFactory)
    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")


class SessionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Session

    project = factory.SubFactory(ProjectFactory)
    team = factory.SelfAttribute("project.team")
    agent_name = "architect"
    agent_persona = "Winston"
    started_at = factory.LazyFunction(timezone.now)


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    session = factory.SubFactory(SessionFactory)
    team = factory.SelfAttribute("session.team")
    seq = factory.Sequence(lambda n: n)
    role = "user"
    content = "Hello"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        message = super()._create(model_class, *args, **kwargs)
        # As capture keeps it: the session's next seq is past every message it holds.
        Session.objects.filter(pk=message.session_id, next_seq__lte=message.seq).update(
            next_seq=message.seq + 1
        )
        message.session.next_seq = max(message.session.next_seq, message.seq + 1)
        return message


class EntityFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Entity

    session = factory.SubFactory(SessionFactory)
    team = factory.SelfAttribute("session.team")
    type = "FILE"
    value = "src/auth.py"
    normalized = factory.LazyAttribute(lambda e: e.value.lower())
